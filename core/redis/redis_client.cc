// RedisClient over hiredis 0.14 (blocking API). A connection error (I/O, EOF) drops the
// context and reconnects with back-off until reconnect_deadline; a command timeout does not
// retry (the command may have run) and surfaces as Timeout.
#include "core/redis/redis_client.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <mutex>
#include <thread>

namespace ccltune::core {
namespace {

using Clock = std::chrono::steady_clock;

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

timeval ToTimeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

// hiredis 0.14 writes with write(2): a peer that went away would raise SIGPIPE and kill the
// process. Ignore it once (only if nobody installed a handler) so it becomes EPIPE.
void IgnoreSigpipeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction old {};
    if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
      signal(SIGPIPE, SIG_IGN);
    }
  });
}

// The command name only: arguments may hold passwords or payloads.
std::string CommandName(const std::vector<std::string>& argv) {
  std::string name = argv.empty() ? "?" : argv[0];
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return name;
}

RedisValue ToValue(const redisReply* r) {
  RedisValue v;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      v.type = RedisValue::Type::kString;
      break;
    case REDIS_REPLY_STATUS:
      v.type = RedisValue::Type::kStatus;
      break;
    case REDIS_REPLY_ERROR:
      v.type = RedisValue::Type::kError;
      break;
    case REDIS_REPLY_INTEGER:
      v.type = RedisValue::Type::kInteger;
      break;
    case REDIS_REPLY_ARRAY:
      v.type = RedisValue::Type::kArray;
      break;
    default:
      v.type = RedisValue::Type::kNil;
      break;
  }
  if (r->str != nullptr) v.str.assign(r->str, r->len);
  v.integer = r->integer;
  for (std::size_t i = 0; i < r->elements; ++i) v.elements.push_back(ToValue(r->element[i]));
  return v;
}

// Errors that mean "the data or server state does not allow this", as opposed to a bug in
// the command we sent.
bool IsStateError(const std::string& msg) {
  static const char* kPrefixes[] = {"WRONGTYPE", "NOAUTH",    "WRONGPASS", "READONLY",
                                    "OOM",       "BUSY",      "LOADING",   "MISCONF",
                                    "NOPERM",    "EXECABORT", "NOSCRIPT",  "MASTERDOWN"};
  for (const char* p : kPrefixes) {
    if (msg.starts_with(p)) return true;
  }
  return false;
}

Status ErrorReplyStatus(const std::string& command, const std::string& msg) {
  std::string text = "redis " + command + " failed: " + msg;
  return IsStateError(msg) ? FailedPrecondition(std::move(text)) : Internal(std::move(text));
}

bool IsTimeout(const redisContext* c, int saved_errno) {
  return c->err == REDIS_ERR_IO && (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK);
}

std::vector<const char*> ArgvPointers(const std::vector<std::string>& argv,
                                      std::vector<std::size_t>& lens) {
  std::vector<const char*> ptrs;
  lens.clear();
  for (const auto& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  return ptrs;
}

}  // namespace

void RedisClient::ContextDeleter::operator()(redisContext* c) const { redisFree(c); }

RedisClient::RedisClient(RedisEndpoint endpoint, RedisOptions options)
    : endpoint_(std::move(endpoint)), options_(options) {}

RedisClient::~RedisClient() = default;

Result<std::unique_ptr<RedisClient>> RedisClient::Connect(const RedisEndpoint& endpoint,
                                                          const RedisOptions& options) {
  IgnoreSigpipeOnce();
  std::unique_ptr<RedisClient> client(new RedisClient(endpoint, options));
  CCLTUNE_RETURN_IF_ERROR(client->Reconnect());
  return client;
}

Status RedisClient::Reconnect() {
  ctx_.reset();
  std::unique_ptr<redisContext, ContextDeleter> ctx(redisConnectWithTimeout(
      endpoint_.host.c_str(), endpoint_.port, ToTimeval(options_.connect_timeout)));
  if (ctx == nullptr) return Unavailable("cannot connect to " + endpoint_.ToString());
  if (ctx->err != 0) {
    return Unavailable("cannot connect to " + endpoint_.ToString() + ": " + ctx->errstr);
  }
  if (redisSetTimeout(ctx.get(), ToTimeval(options_.command_timeout)) != REDIS_OK) {
    return Unavailable("cannot set timeout on " + endpoint_.ToString() + ": " + ctx->errstr);
  }
  ctx_ = std::move(ctx);
  bool conn_error = false;
  if (!endpoint_.password.empty()) {
    const auto colon = endpoint_.password.find(':');
    std::vector<std::string> auth{"AUTH"};
    if (colon != std::string::npos && colon > 0) {
      auth.push_back(endpoint_.password.substr(0, colon));  // ACL user
    }
    auth.push_back(colon == std::string::npos ? endpoint_.password
                                              : endpoint_.password.substr(colon + 1));
    auto r = CommandOnce(auth, &conn_error);
    if (!r.ok()) {
      ctx_.reset();
      return Status(r.status().code(), "authentication to " + endpoint_.ToString() +
                                           " failed: " + r.status().message());
    }
  }
  if (endpoint_.db != 0) {
    auto r = CommandOnce({"SELECT", std::to_string(endpoint_.db)}, &conn_error);
    if (!r.ok()) {
      ctx_.reset();
      return r.status().WithContext(endpoint_.ToString());
    }
  }
  return Status::Ok();
}

Result<RedisValue> RedisClient::CommandOnce(const std::vector<std::string>& argv,
                                            bool* connection_error) {
  *connection_error = false;
  if (ctx_ == nullptr) {
    *connection_error = true;
    return Unavailable("not connected to " + endpoint_.ToString());
  }
  std::vector<std::size_t> lens;
  auto ptrs = ArgvPointers(argv, lens);
  errno = 0;
  ReplyPtr reply(static_cast<redisReply*>(
      redisCommandArgv(ctx_.get(), static_cast<int>(argv.size()), ptrs.data(), lens.data())));
  const int saved_errno = errno;
  if (reply == nullptr) {
    const std::string why = ctx_->errstr;
    const bool timeout = IsTimeout(ctx_.get(), saved_errno);
    ctx_.reset();  // hiredis contexts are unusable after an error
    if (timeout) {
      return TimeoutError("redis " + CommandName(argv) + ": no reply from " + endpoint_.ToString() +
                          " within " + std::to_string(options_.command_timeout.count()) + " ms");
    }
    *connection_error = true;
    return Unavailable("redis " + CommandName(argv) + " on " + endpoint_.ToString() + ": " + why);
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    const std::string msg(reply->str, reply->len);
    // A restarted server answers LOADING while it reads its data back: retry like a
    // connection error instead of failing the job.
    *connection_error = msg.starts_with("LOADING");
    return ErrorReplyStatus(CommandName(argv), msg);
  }
  return ToValue(reply.get());
}

Status RedisClient::ReconnectUntil(Clock::time_point give_up, const std::string& what) {
  const auto started = Clock::now();
  auto backoff = std::chrono::milliseconds(20);
  // The last attempt's own error ("cannot connect to URL: Connection refused") says why
  // better than the deadline does.
  Status last = Unavailable(endpoint_.ToString() + " unreachable (or loading)");
  for (;;) {
    if (Clock::now() + backoff >= give_up) {
      const auto tried =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
      return Unavailable("redis " + what + ": " + last.message() + " (reconnecting for " +
                         std::to_string(tried.count()) + " ms)");
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
    Status s = Reconnect();
    if (s.ok()) return s;
    if (s.code() != StatusCode::kUnavailable) return s;  // e.g. wrong password: no retry
    last = std::move(s);
  }
}

Result<RedisValue> RedisClient::Command(const std::vector<std::string>& argv) {
  if (argv.empty()) return InvalidArgument("redis command: empty argv");
  const auto give_up = Clock::now() + options_.reconnect_deadline;
  for (;;) {
    bool conn_error = false;
    auto r = CommandOnce(argv, &conn_error);
    if (r.ok() || !conn_error) return r;
    CCLTUNE_RETURN_IF_ERROR(ReconnectUntil(give_up, CommandName(argv)));
  }
}

// MULTI, the commands and EXEC go out as one pipelined write. If that write fails the
// server saw no EXEC and dropped the queued transaction, so a retry is safe
// (*sent_nothing); once EXEC was sent the outcome is unknown and no retry happens.
Result<RedisValue> RedisClient::TransactionOnce(
    const std::vector<std::vector<std::string>>& commands, bool* sent_nothing) {
  *sent_nothing = true;
  if (ctx_ == nullptr) return Unavailable("not connected to " + endpoint_.ToString());
  std::vector<std::vector<std::string>> all{{"MULTI"}};
  all.insert(all.end(), commands.begin(), commands.end());
  all.push_back({"EXEC"});
  std::vector<std::size_t> lens;
  for (const auto& argv : all) {
    auto ptrs = ArgvPointers(argv, lens);
    redisAppendCommandArgv(ctx_.get(), static_cast<int>(argv.size()), ptrs.data(), lens.data());
  }
  for (int done = 0; done == 0;) {
    if (redisBufferWrite(ctx_.get(), &done) != REDIS_OK) {
      const std::string why = ctx_->errstr;
      ctx_.reset();
      return Unavailable("redis MULTI on " + endpoint_.ToString() + ": " + why);
    }
  }
  *sent_nothing = false;
  Status first_error;
  RedisValue exec;
  for (std::size_t i = 0; i < all.size(); ++i) {
    void* raw = nullptr;
    errno = 0;
    if (redisGetReply(ctx_.get(), &raw) != REDIS_OK || raw == nullptr) {
      const bool timeout = IsTimeout(ctx_.get(), errno);
      const std::string why = ctx_->errstr;
      ctx_.reset();
      return Status(
          timeout ? StatusCode::kTimeout : StatusCode::kUnavailable,
          "redis EXEC on " + endpoint_.ToString() + ": " + why + " (transaction outcome unknown)");
    }
    ReplyPtr reply(static_cast<redisReply*>(raw));
    if (reply->type == REDIS_REPLY_ERROR && first_error.ok()) {
      first_error = ErrorReplyStatus(CommandName(all[i]), std::string(reply->str, reply->len));
    }
    if (i + 1 == all.size()) exec = ToValue(reply.get());
  }
  if (!first_error.ok()) {
    // EXEC discarded the queue: a LOADING server applied nothing, so a retry is safe.
    *sent_nothing = first_error.message().find(": LOADING") != std::string::npos;
    return first_error.WithContext("redis transaction");
  }
  if (exec.is_nil()) return Aborted("redis transaction aborted (EXEC returned nil)");
  for (std::size_t i = 0; i < exec.elements.size(); ++i) {
    if (exec.elements[i].type == RedisValue::Type::kError) {
      return ErrorReplyStatus(CommandName(commands[i]), exec.elements[i].str)
          .WithContext("redis transaction (applied partially)");
    }
  }
  return exec;
}

Result<RedisValue> RedisClient::Transaction(const std::vector<std::vector<std::string>>& commands) {
  for (const auto& argv : commands) {
    if (argv.empty()) return InvalidArgument("redis transaction: empty command");
  }
  const auto give_up = Clock::now() + options_.reconnect_deadline;
  for (;;) {
    bool sent_nothing = false;
    auto r = TransactionOnce(commands, &sent_nothing);
    if (r.ok() || !sent_nothing) return r;
    CCLTUNE_RETURN_IF_ERROR(ReconnectUntil(give_up, "MULTI"));
  }
}

Status RedisClient::WatchGuards(const std::vector<std::string>& guards, bool* connection_error) {
  std::vector<std::string> watch{"WATCH"}, mget{"MGET"};
  watch.insert(watch.end(), guards.begin(), guards.end());
  mget.insert(mget.end(), guards.begin(), guards.end());
  CCLTUNE_RETURN_IF_ERROR(CommandOnce(watch, connection_error).status());
  CCLTUNE_ASSIGN_OR_RETURN(RedisValue v, CommandOnce(mget, connection_error));
  for (std::size_t i = 0; i < guards.size() && i < v.elements.size(); ++i) {
    if (v.elements[i].is_nil()) continue;
    bool ignored = false;
    (void)CommandOnce({"UNWATCH"}, &ignored);
    return Aborted(guards[i] + " is set (" + v.elements[i].str + ")");
  }
  return Status::Ok();
}

Result<RedisValue> RedisClient::TransactionUnless(
    const std::vector<std::string>& guards, const std::vector<std::vector<std::string>>& commands) {
  if (guards.empty()) return Transaction(commands);
  const auto give_up = Clock::now() + options_.reconnect_deadline;
  for (;;) {
    bool retry = false;
    Status watched = WatchGuards(guards, &retry);
    if (!watched.ok() && !retry) return watched;
    if (watched.ok()) {
      auto r = TransactionOnce(commands, &retry);
      // EXEC answered nil: a guard changed after WATCH. Read them again to name it.
      const bool guard_touched = !r.ok() && r.status().code() == StatusCode::kAborted;
      if (r.ok() || (!retry && !guard_touched)) return r;
      if (guard_touched) {
        if (Clock::now() >= give_up) return r.status().WithContext("guards " + guards.front());
        continue;
      }
    }
    CCLTUNE_RETURN_IF_ERROR(ReconnectUntil(give_up, "WATCH"));
  }
}

Result<double> RedisClient::ServerTime() {
  CCLTUNE_ASSIGN_OR_RETURN(RedisValue v, Command({"TIME"}));
  if (v.type != RedisValue::Type::kArray || v.elements.size() != 2) {
    return Internal("redis TIME: unexpected reply shape");
  }
  try {
    return std::stod(v.elements[0].str) + std::stod(v.elements[1].str) / 1e6;
  } catch (const std::exception&) {
    return Internal("redis TIME: reply is not numeric");
  }
}

}  // namespace ccltune::core
