#include "controller/cache/redis_connect.h"

#include <map>
#include <memory>

namespace ccltune::controller {
namespace {

using Clients = std::map<std::string, std::unique_ptr<core::RedisClient>>;

Clients& ThreadClients() {
  thread_local Clients clients;
  return clients;
}

}  // namespace

core::Result<core::RedisClient*> ThreadRedis(const std::string& url, const std::string& password) {
  auto& clients = ThreadClients();
  const std::string key = url + '\n' + password;
  if (auto it = clients.find(key); it != clients.end()) return it->second.get();
  CCLTUNE_ASSIGN_OR_RETURN(core::RedisEndpoint ep, core::ParseRedisUrl(url));
  if (ep.password.empty()) ep.password = password;
  core::RedisOptions opts;
  opts.connect_timeout = std::chrono::milliseconds(1000);
  opts.command_timeout = std::chrono::milliseconds(2000);
  opts.reconnect_deadline = std::chrono::milliseconds(1500);
  CCLTUNE_ASSIGN_OR_RETURN(auto client, core::RedisClient::Connect(ep, opts));
  core::RedisClient* raw = client.get();
  clients[key] = std::move(client);
  return raw;
}

}  // namespace ccltune::controller
