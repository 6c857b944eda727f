#include "core/telemetry/telemetry_settings.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace ccltune::telemetry {
namespace {

core::Status Bad(const std::string& name, const std::string& value, const std::string& allowed) {
  return core::InvalidArgument(name + ": '" + value + "' is not " + allowed);
}

// A whole decimal number in [lo, hi], nothing around it.
std::optional<long> Integer(const std::string& text, long lo, long hi) {
  long n = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (text.empty() || ec != std::errc() || ptr != end || n < lo || n > hi) return std::nullopt;
  return n;
}

// Reads one variable when set: `parse` turns its text into the setting or a Status.
template <class Parse>
void Read(const EnvLookup& env, const char* name, std::vector<core::Status>* errors, Parse parse) {
  const char* value = env(name);
  if (value == nullptr) return;
  if (core::Status s = parse(std::string(value)); !s.ok()) errors->push_back(s);
}

void ReadExport(const EnvLookup& env, TelemetrySettings& s, std::vector<core::Status>* errors) {
  Read(env, "CCLTUNE_METRICS_PORT", errors, [&](const std::string& v) {
    auto port = Integer(v, 0, 65535);
    if (port) s.metrics_port = static_cast<int>(*port);
    return port ? core::Status::Ok()
                : Bad("CCLTUNE_METRICS_PORT", v,
                      "a port: 0 (no endpoint) or 1-65535 (default 9464; the local rank is added)");
  });
  // The first launcher variable that is set names this process's place on its node.
  for (const char* name : {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"}) {
    if (env(name) == nullptr) continue;
    Read(env, name, errors, [&](const std::string& v) {
      auto rank = Integer(v, 0, 65535);
      if (rank) s.local_rank = static_cast<int>(*rank);
      return rank ? core::Status::Ok() : Bad(name, v, "a local rank: an integer 0-65535");
    });
    break;
  }
  Read(env, "CCLTUNE_PUSHGATEWAY", errors, [&](const std::string& v) {
    if (v.empty()) return core::Status::Ok();  // no pushes
    auto target = ParsePushTarget(v);
    if (!target.ok()) return target.status().WithContext("CCLTUNE_PUSHGATEWAY");
    s.push = *target;
    return core::Status::Ok();
  });
  Read(env, "CCLTUNE_TELEMETRY_PUSH_SECONDS", errors, [&](const std::string& v) {
    char* end = nullptr;
    const double seconds = std::strtod(v.c_str(), &end);
    const bool good =
        !v.empty() && *end == '\0' && std::isfinite(seconds) && seconds >= 0.1 && seconds <= 86400;
    if (good) s.push_seconds = seconds;
    return good ? core::Status::Ok()
                : Bad("CCLTUNE_TELEMETRY_PUSH_SECONDS", v,
                      "a number of seconds from 0.1 to 86400 (default 15)");
  });
}

void ReadProcess(const EnvLookup& env, TelemetrySettings& s, std::vector<core::Status>* errors) {
  Read(env, "CCLTUNE_TELEMETRY_QUEUE", errors, [&](const std::string& v) {
    auto calls = Integer(v, 16, 1 << 24);
    if (calls) s.queue_calls = static_cast<std::size_t>(*calls);
    return calls ? core::Status::Ok()
                 : Bad("CCLTUNE_TELEMETRY_QUEUE", v,
                       "a number of calls from 16 to 16777216 (default 65536)");
  });
  Read(env, "CCLTUNE_REDIS_URL", errors, [&](const std::string& v) {
    if (v.empty()) return core::Status::Ok();  // no Redis: no min-over-ranks split
    auto endpoint = core::ParseRedisUrl(v);
    // Neither the value nor the parser's message (which quotes it): it may hold a password.
    if (!endpoint.ok())
      return core::InvalidArgument(
          "CCLTUNE_REDIS_URL: the value is not redis://[[user]:password@]host[:port][/db] (not "
          "shown: it may hold a password)");
    s.redis = *endpoint;
    core::ApplyRedisCredentials(env("CCLTUNE_REDIS_USERNAME"), env("CCLTUNE_REDIS_PASSWORD"),
                                &*s.redis);
    return core::Status::Ok();
  });
  const std::pair<const char*, std::string*> labels[] = {
      {"CCLTUNE_POD_NAMESPACE", &s.pod_namespace},
      {"CCLTUNE_POD_NAME", &s.pod_name},
      {"CCLTUNE_NODE_NAME", &s.node_name}};
  for (const auto& [name, field] : labels)
    if (const char* v = env(name)) *field = v;
}

}  // namespace

core::Result<PushTarget> ParsePushTarget(const std::string& url) {
  const auto bad = [&](const std::string& why) {
    return core::InvalidArgument("'" + url + "' is not http[s]://host[:port][/prefix]: " + why);
  };
  const std::size_t sep = url.find("://");
  const std::string scheme = sep == std::string::npos ? "" : url.substr(0, sep);
  if (scheme != "http" && scheme != "https") return bad("the scheme must be http or https");
  std::string rest = url.substr(sep + 3);
  std::string prefix;
  if (const std::size_t slash = rest.find('/'); slash != std::string::npos) {
    prefix = rest.substr(slash);
    rest.resize(slash);
  }
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  std::string host = rest, port = scheme == "https" ? "443" : "80";
  if (const std::size_t colon = rest.rfind(':'); colon != std::string::npos) {
    host = rest.substr(0, colon);
    if (!Integer(rest.substr(colon + 1), 1, 65535)) return bad("the port must be 1-65535");
    port = rest.substr(colon + 1);
  }
  if (host.empty() || host.find_first_of("@?# ") != std::string::npos)
    return bad("no host, or a host with user info, a query or spaces");
  return PushTarget{url, scheme + "://" + host, port + prefix};
}

TelemetrySettings ReadTelemetrySettings(const EnvLookup& env, std::vector<core::Status>* errors) {
  TelemetrySettings s;
  const char* on = env("CCLTUNE_TELEMETRY");
  const std::string value = on == nullptr ? "" : on;
  if (value.empty() || value == "off" || value == "0") return s;
  if (value != "on" && value != "1") {
    errors->push_back(Bad("CCLTUNE_TELEMETRY", value, "one of on, off (the default)"));
    return s;
  }
  const std::size_t before = errors->size();
  ReadExport(env, s, errors);
  ReadProcess(env, s, errors);
  s.enabled = errors->size() == before;
  return s;
}

}  // namespace ccltune::telemetry
