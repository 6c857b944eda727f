// Deadline-bounded socket I/O shared by MetricsServer and PushgatewayClient (internal to
// ccltune_worker_metrics). Plain POSIX sockets: the worker has no HTTP library and needs none
// for one GET and one PUT. Every call is bounded by a Deadline; nothing here blocks past it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"
#include "worker/deadline.h"

namespace ccltune::worker::net {

// Owns a file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release();
  void Reset();

 private:
  int fd_ = -1;
};

// Waits for `events` (POLLIN/POLLOUT) on fd. Timeout when the deadline passes first.
core::Status WaitFd(int fd, short events, Deadline deadline);
// Sends all of `data` (MSG_NOSIGNAL: a peer that hung up must not kill the worker).
core::Status WriteAll(int fd, std::string_view data, Deadline deadline);
// Reads until `terminator` has been seen (returned data includes it), EOF, or `max_bytes`.
// FailedPrecondition when max_bytes is reached without the terminator; an empty terminator
// reads to EOF.
core::Result<std::string> ReadUntil(int fd, std::string_view terminator, std::size_t max_bytes,
                                    Deadline deadline);
// Non-blocking TCP connect to host:port (numeric or name; name resolution is the one step the
// deadline cannot bound, since getaddrinfo has no timeout).
core::Result<UniqueFd> ConnectTcp(const std::string& host, int port, Deadline deadline);

}  // namespace ccltune::worker::net
