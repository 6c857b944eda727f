// ccltuneConfig_t + environment → RuntimeConfig (runtime_config.h).
#include "runtime/runtime_config.h"

#include <charconv>
#include <cstdlib>

#include "core/base/env_switch.h"
#include "core/base/sizes.h"
#include "core/node/fingerprint.h"
#include "core/redis/redis_client.h"
#include "runtime/confirm/trial_rule.h"

namespace ccltune::runtime {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

core::Result<std::size_t> ParseBytes(const std::string& name, const std::string& v,
                                     std::size_t max) {
  // Plain bytes or with a unit (256MiB), as sizes are written everywhere else; 0 is none.
  if (v == "0") return std::size_t{0};
  const core::Result<std::uint64_t> n = core::ParseSize(v);
  if (!n.ok() || *n > max) {
    return core::InvalidArgument(name + "='" + v + "' must be a byte count 0.." +
                                 std::to_string(max) + " (e.g. 268435456 or 256MiB)");
  }
  return static_cast<std::size_t>(*n);
}

core::Result<std::chrono::milliseconds> TimeoutOf(const std::string& name, long long ms) {
  if (ms < kMinTimeoutMs || ms > kMaxTimeoutMs) {
    return core::InvalidArgument(name + "=" + std::to_string(ms) + ": allowed " +
                                 std::to_string(kMinTimeoutMs) + ".." +
                                 std::to_string(kMaxTimeoutMs) + " (milliseconds)");
  }
  return std::chrono::milliseconds(ms);
}

core::Result<std::chrono::milliseconds> ParseTimeoutMs(const std::string& name,
                                                       const std::string& v) {
  long long n = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size()) {
    return core::InvalidArgument(name + "='" + v + "' must be milliseconds " +
                                 std::to_string(kMinTimeoutMs) + ".." +
                                 std::to_string(kMaxTimeoutMs));
  }
  return TimeoutOf(name, n);
}

core::Result<int> ParseConfirmCalls(const std::string& v) {
  int n = -1;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || n < 0 || n > kMaxConfirmCalls) {
    return core::InvalidArgument("CCLTUNE_CONFIRM_CALLS='" + v + "' must be 0 (off) .. " +
                                 std::to_string(kMaxConfirmCalls) +
                                 ": timed calls per side of each tuned size's in-program trial");
  }
  return n;
}

core::Status CheckHeader(const ccltuneConfig_t& c) {
  if (c.size != sizeof(ccltuneConfig_t)) {
    return core::InvalidArgument(
        "ccltuneConfig_t.size=" + std::to_string(c.size) + ": must be sizeof(ccltuneConfig_t) = " +
        std::to_string(sizeof(ccltuneConfig_t)) + " (start from CCLTUNE_CONFIG_INITIALIZER)");
  }
  // Minor versions only add entry points: a caller built against an older minor (0.1 was
  // the first) runs on.
  if (c.version < 100 || c.version / 10000 != CCLTUNE_MAJOR ||
      c.version / 100 > CCLTUNE_VERSION_CODE / 100) {
    return core::InvalidArgument("ccltuneConfig_t.version=" + std::to_string(c.version) +
                                 ": this library is " + std::to_string(CCLTUNE_VERSION_CODE) +
                                 " (same major, minor up to this library's)");
  }
  return core::Status::Ok();
}

core::Status ApplySource(const ccltuneConfig_t& c, RuntimeConfig& out) {
  if (c.resultsFile != nullptr) out.source.results_file = c.resultsFile;
  if (c.redisUrl != nullptr) {
    out.source.redis_url = c.redisUrl;
    auto ep = core::ParseRedisUrl(out.source.redis_url);  // never repeats a password
    if (!ep.ok()) return ep.status().WithContext("ccltuneConfig_t.redisUrl");
  }
  if (c.loadTimeoutMs != 0) {
    if (c.loadTimeoutMs < 1 || c.loadTimeoutMs > 10000) {
      return core::InvalidArgument("ccltuneConfig_t.loadTimeoutMs=" +
                                   std::to_string(c.loadTimeoutMs) + ": allowed 1..10000");
    }
    out.source.load_timeout = std::chrono::milliseconds(c.loadTimeoutMs);
  }
  if (c.fingerprint != nullptr) {
    out.fingerprint = c.fingerprint;
    out.fingerprint_source = "ccltuneConfig_t.fingerprint";
  }
  if (!out.fingerprint.empty()) {
    return core::CheckPinnedFingerprint(out.fingerprint, out.fingerprint_source);
  }
  return core::Status::Ok();
}

core::Status ApplyLimits(const ccltuneConfig_t& c, RuntimeConfig& out) {
  if (c.timeoutMs != 0) {
    CCLTUNE_ASSIGN_OR_RETURN(out.timeout, TimeoutOf("ccltuneConfig_t.timeoutMs", c.timeoutMs));
  }
  if (c.poolBytes > kMaxPoolBytes) {
    return core::InvalidArgument("ccltuneConfig_t.poolBytes=" + std::to_string(c.poolBytes) +
                                 ": allowed 0.." + std::to_string(kMaxPoolBytes));
  }
  if (c.poolBytes != 0) out.pool_bytes = c.poolBytes;
  if (c.stagingBytes > kMaxStagingBytes) {
    return core::InvalidArgument("ccltuneConfig_t.stagingBytes=" + std::to_string(c.stagingBytes) +
                                 ": allowed 0.." + std::to_string(kMaxStagingBytes));
  }
  if (c.stagingBytes != 0) out.staging_bytes = c.stagingBytes;
  if (c.peerMemory != -1 && c.peerMemory != 0 && c.peerMemory != 1) {
    return core::InvalidArgument("ccltuneConfig_t.peerMemory=" + std::to_string(c.peerMemory) +
                                 ": allowed -1 (CCLTUNE_PEER_MEMORY, default on), 0, 1");
  }
  if (c.peerMemory != -1) out.peer_memory = c.peerMemory == 1;
  return core::Status::Ok();
}

core::Status ApplyEnv(RuntimeConfig& out) {
  CCLTUNE_ASSIGN_OR_RETURN(out.source, apply::PluginConfigFromEnv());
  out.fingerprint = Env("CCLTUNE_FINGERPRINT");
  if (const std::string p = Env("CCLTUNE_POOL_BYTES"); !p.empty()) {
    CCLTUNE_ASSIGN_OR_RETURN(out.pool_bytes, ParseBytes("CCLTUNE_POOL_BYTES", p, kMaxPoolBytes));
  }
  if (const std::string b = Env("CCLTUNE_STAGING_BYTES"); !b.empty()) {
    CCLTUNE_ASSIGN_OR_RETURN(out.staging_bytes,
                             ParseBytes("CCLTUNE_STAGING_BYTES", b, kMaxStagingBytes));
  }
  if (const std::string t = Env("CCLTUNE_TIMEOUT_MS"); !t.empty()) {
    CCLTUNE_ASSIGN_OR_RETURN(out.timeout, ParseTimeoutMs("CCLTUNE_TIMEOUT_MS", t));
  }
  if (const std::string hold = Env("CCLTUNE_HOLD_IN_PLACE"); !hold.empty()) {
    if (hold != "0" && hold != "1") {
      return core::InvalidArgument("CCLTUNE_HOLD_IN_PLACE: '" + hold +
                                   "' is not one of 1 (the default: one-shot pull in place holds "
                                   "its results in registers), 0 (it does not)");
    }
    out.hold_in_place = hold == "1";
  }
  if (const std::string n = Env("CCLTUNE_CONFIRM_CALLS"); !n.empty()) {
    CCLTUNE_ASSIGN_OR_RETURN(out.confirm_calls, ParseConfirmCalls(n));
  }
  const char* peer = std::getenv("CCLTUNE_PEER_MEMORY");
  CCLTUNE_ASSIGN_OR_RETURN(out.peer_memory, core::EnvSwitch("CCLTUNE_PEER_MEMORY", peer,
                                                            "peer memory off", "set it up"));
  return core::Status::Ok();
}

}  // namespace

core::Result<RuntimeConfig> ResolveConfig(const ccltuneConfig_t* config) {
  RuntimeConfig out;
  CCLTUNE_RETURN_IF_ERROR(ApplyEnv(out));
  if (config == nullptr) return out;
  CCLTUNE_RETURN_IF_ERROR(CheckHeader(*config));
  CCLTUNE_RETURN_IF_ERROR(ApplySource(*config, out));
  CCLTUNE_RETURN_IF_ERROR(ApplyLimits(*config, out));
  return out;
}

}  // namespace ccltune::runtime
