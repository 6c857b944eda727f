// Environment → PluginConfig (plugin_config.h).
#include "core/apply/plugin_config.h"

#include <charconv>
#include <cstdlib>

#include "core/apply/applied_choice.h"
#include "core/redis/redis_client.h"

namespace ccltune::apply {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

core::Result<std::chrono::milliseconds> ParseTimeout(const std::string& v) {
  long long ms = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), ms);
  if (ec != std::errc() || p != v.data() + v.size() || ms < 1 || ms > 10000) {
    return core::InvalidArgument("CCLTUNE_PLUGIN_TIMEOUT_MS='" + v +
                                 "' must be an integer number of milliseconds 1..10000");
  }
  return std::chrono::milliseconds(ms);
}

}  // namespace

core::Result<PluginConfig> PluginConfigFromEnv() {
  PluginConfig c;
  c.results_file = Env("CCLTUNE_RESULTS_FILE");
  c.redis_url = Env("CCLTUNE_REDIS_URL");
  if (!c.redis_url.empty()) {
    auto ep = core::ParseRedisUrl(c.redis_url);  // the message never repeats a password
    if (!ep.ok()) return ep.status().WithContext("CCLTUNE_REDIS_URL");
  }
  if (const std::string t = Env("CCLTUNE_PLUGIN_TIMEOUT_MS"); !t.empty()) {
    CCLTUNE_ASSIGN_OR_RETURN(c.load_timeout, ParseTimeout(t));
  }
  if (const std::string d = Env("CCLTUNE_PLUGIN_DTYPE"); !d.empty()) {
    auto dtype = core::ParseDtype(d);
    if (!dtype.ok()) return dtype.status().WithContext("CCLTUNE_PLUGIN_DTYPE");
    c.dtype = *dtype;
  }
  return c;
}

core::Result<int> ChannelCeilingFromEnv() {
  const std::string v = Env("NCCL_MIN_CTAS");
  if (v.empty()) return 0;
  auto n = ParseChannelCeiling(v);
  if (!n.ok()) return n.status().WithContext("NCCL_MIN_CTAS");
  return n;
}

}  // namespace ccltune::apply
