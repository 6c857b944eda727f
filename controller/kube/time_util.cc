#include "controller/kube/time_util.h"

#include <cstdio>
#include <ctime>

namespace ccltune::controller {

std::string FormatTime(Clock::time_point t) {
  std::time_t secs = Clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string FormatMicroTime(Clock::time_point t) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[48];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  char out[64];
  std::snprintf(out, sizeof(out), "%s.%06lldZ", buf, static_cast<long long>(us % 1000000));
  return out;
}

std::optional<Clock::time_point> ParseTime(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  auto t = Clock::from_time_t(timegm(&tm));
  std::string rest = text.substr(static_cast<size_t>(consumed));
  if (!rest.empty() && rest[0] == '.') {  // fractional seconds
    size_t i = 1;
    double frac = 0, scale = 0.1;
    for (; i < rest.size() && rest[i] >= '0' && rest[i] <= '9'; ++i, scale /= 10) {
      frac += (rest[i] - '0') * scale;
    }
    t += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(frac));
    rest = rest.substr(i);
  }
  int sign = 0, oh = 0, om = 0;
  if (rest.size() >= 6 && (rest[0] == '+' || rest[0] == '-') &&
      std::sscanf(rest.c_str() + 1, "%2d:%2d", &oh, &om) == 2) {
    sign = rest[0] == '+' ? 1 : -1;
    t -= std::chrono::minutes(sign * (oh * 60 + om));
  }
  return t;
}

}  // namespace ccltune::controller
