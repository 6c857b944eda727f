// ConnectCache and ExplainAuth (redis_login.h).
#include "worker/launcher/redis_login.h"

namespace ccltune::worker {
namespace {

bool Says(const core::Status& st, const char* words) {
  return st.message().find(words) != std::string::npos;
}

// "redis://:PASSWORD@127.0.0.1:6379/0": the endpoint's URL with the password's place shown.
std::string UrlWithPassword(const core::RedisEndpoint& ep) {
  std::string url = ep.ToString();
  const std::string scheme = "redis://";
  return scheme + ":PASSWORD@" + url.substr(scheme.size());
}

}  // namespace

core::Status ExplainAuth(const core::Status& st, const core::RedisEndpoint& ep) {
  const std::string at = "the Redis at " + ep.ToString();
  if (Says(st, "NOAUTH")) {
    return core::FailedPrecondition(at + " requires a password (NOAUTH): give it in the URL, " +
                                    "--redis " + UrlWithPassword(ep) +
                                    ", or in env CCLTUNE_REDIS_PASSWORD");
  }
  if (Says(st, "WRONGPASS") || Says(st, "invalid password")) {
    return core::FailedPrecondition(
        at + " refused the password (WRONGPASS): check the one in --redis (" + UrlWithPassword(ep) +
        ", or redis://USER:PASSWORD@… for an ACL user) or in env " +
        "CCLTUNE_REDIS_PASSWORD, which takes precedence");
  }
  if (Says(st, "without any password configured")) {
    return core::FailedPrecondition(at +
                                    " has no password, but one was given: leave it out of --redis "
                                    "and unset CCLTUNE_REDIS_PASSWORD");
  }
  return st;
}

core::Result<std::unique_ptr<core::RedisClient>> ConnectCache(const core::RedisEndpoint& endpoint,
                                                              const core::RedisOptions& options) {
  auto client = core::RedisClient::Connect(endpoint, options);
  if (!client.ok()) return ExplainAuth(client.status(), endpoint);
  auto pong = (*client)->Command({"PING"});
  if (!pong.ok()) return ExplainAuth(pong.status(), endpoint);
  return client;
}

}  // namespace ccltune::worker
