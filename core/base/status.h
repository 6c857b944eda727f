// Status and Result<T>: how every ccltune function reports failure. Exceptions stay at
// library edges (cpprest, yaml-cpp, nlohmann) and are turned into a Status there.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace ccltune::core {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad user input: plan, flag, URL (exit code 2 at the CLI)
  kNotFound,            // a key, file or record that is not there
  kTimeout,             // a deadline passed
  kUnavailable,         // a server (Redis, a peer) cannot be reached
  kAborted,             // another rank raised the abort flag
  kPeerLost,            // a rank of the attempt died or disconnected
  kFailedPrecondition,  // the system is not in a state that allows the call
  kDataLoss,            // a stored record does not parse
  kInternal,            // a bug or an unexpected library failure
  kUnsupported,         // can never succeed here, whatever the input's size (a choice this
                        // communicator cannot run): not worth trying again
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: collectives[0].op: 'allreduce' is not one of allReduce, ..."
  std::string ToString() const;
  // Prefixes the message with where it happened: "publish: " + message.
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status TimeoutError(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
inline Status PeerLost(std::string m) { return {StatusCode::kPeerLost, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }

// Result<T> holds a value or a non-OK Status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace ccltune::core

#define CCLTUNE_CONCAT_INNER(a, b) a##b
#define CCLTUNE_CONCAT(a, b) CCLTUNE_CONCAT_INNER(a, b)

#define CCLTUNE_RETURN_IF_ERROR(expr)             \
  do {                                            \
    ::ccltune::core::Status ccltune_st_ = (expr); \
    if (!ccltune_st_.ok()) return ccltune_st_;    \
  } while (0)

#define CCLTUNE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

// CCLTUNE_ASSIGN_OR_RETURN(auto x, MakeX());
#define CCLTUNE_ASSIGN_OR_RETURN(lhs, expr) \
  CCLTUNE_ASSIGN_OR_RETURN_IMPL(CCLTUNE_CONCAT(ccltune_r_, __LINE__), lhs, expr)
