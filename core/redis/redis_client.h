// A small blocking Redis client over hiredis: URL parsing, AUTH/SELECT, per-command
// timeouts, and reconnection with a deadline. Not thread-safe: one client per thread.
// Every call blocks for at most the configured timeouts.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"

struct redisContext;
struct redisReply;

namespace ccltune::core {

struct RedisEndpoint {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;
  std::string password;          // never logged; ToString() masks it
  std::string ToString() const;  // "redis://127.0.0.1:6379/0" (no password)
};

// redis://[[user]:password@]host[:port][/db]; error names what is wrong.
Result<RedisEndpoint> ParseRedisUrl(const std::string& url);
// The AUTH command for `ep` (empty without a password): AUTH password, or AUTH user password
// for a Redis 6+ ACL user (the "user:password" convention of RedisEndpoint::password).
std::vector<std::string> AuthArgv(const RedisEndpoint& ep);
// CCLTUNE_REDIS_PASSWORD's value (`password`, may be null) overrides the URL's password, for
// the ACL user CCLTUNE_REDIS_USERNAME (`username`, may be null) when set: an injected pod's
// credentials come in their own variables (the password is a Secret's, the URL a plain value).
void ApplyRedisCredentials(const char* username, const char* password, RedisEndpoint* ep);

// A decoded reply: what hiredis returns, copied into value types.
struct RedisValue {
  enum class Type { kNil, kString, kInteger, kArray, kStatus, kError };
  Type type = Type::kNil;
  std::string str;                   // kString, kStatus, kError
  long long integer = 0;             // kInteger
  std::vector<RedisValue> elements;  // kArray
  bool is_nil() const { return type == Type::kNil; }
};

struct RedisOptions {
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds command_timeout{5000};
  // How long Command() keeps reconnecting after a connection error before giving up.
  std::chrono::milliseconds reconnect_deadline{10000};
};

class RedisClient {
 public:
  // Blocks for up to connect_timeout (+ AUTH/SELECT).
  static Result<std::unique_ptr<RedisClient>> Connect(const RedisEndpoint& endpoint,
                                                      const RedisOptions& options = {});
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Runs one command; on a connection error reconnects and retries until
  // reconnect_deadline. A Redis error reply is returned as Status (not as kError value).
  Result<RedisValue> Command(const std::vector<std::string>& argv);
  // Runs commands inside MULTI/EXEC as one transaction (no retry after EXEC was sent
  // unless the connection broke before it); returns EXEC's array.
  Result<RedisValue> Transaction(const std::vector<std::vector<std::string>>& commands);
  // The transaction, only if none of `guards` exists, atomically: WATCH the guards, read
  // them, then MULTI/EXEC; a guard set in between makes EXEC apply nothing. Aborted, naming
  // the guard and its value, when one is set.
  Result<RedisValue> TransactionUnless(const std::vector<std::string>& guards,
                                       const std::vector<std::vector<std::string>>& commands);
  // Server time in seconds (Redis TIME), the clock every rank agrees on.
  Result<double> ServerTime();

  const RedisEndpoint& endpoint() const { return endpoint_; }

 private:
  RedisClient(RedisEndpoint endpoint, RedisOptions options);
  Status Reconnect();
  Result<RedisValue> CommandOnce(const std::vector<std::string>& argv, bool* connection_error);
  // Reconnects with back-off until it works or `give_up` passes (Unavailable naming `what`).
  Status ReconnectUntil(std::chrono::steady_clock::time_point give_up, const std::string& what);
  Result<RedisValue> TransactionOnce(const std::vector<std::vector<std::string>>& commands,
                                     bool* sent_nothing);
  // WATCH + MGET of the guards: OK when none is set.
  Status WatchGuards(const std::vector<std::string>& guards, bool* connection_error);

  struct ContextDeleter {
    void operator()(redisContext* c) const;
  };
  RedisEndpoint endpoint_;
  RedisOptions options_;
  std::unique_ptr<redisContext, ContextDeleter> ctx_;
};

}  // namespace ccltune::core
