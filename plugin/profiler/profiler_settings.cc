#include "plugin/profiler/profiler_settings.h"

#include <charconv>
#include <string_view>

namespace ccltune::plugin::profiler {

InFlightSetting ReadInFlightSetting(const char* text) {
  InFlightSetting s;
  if (text == nullptr) return s;
  const std::string_view v(text);
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n < kMinInFlight || n > kMaxInFlight) {
    s.error = std::string(kInFlightVariable) + "=\"" + std::string(v) + "\": expected an integer " +
              std::to_string(kMinInFlight) + ".." + std::to_string(kMaxInFlight);
    return s;
  }
  s.value = n;
  return s;
}

TimingSetting ReadTimingSetting(const char* text) {
  TimingSetting s;
  if (text == nullptr) return s;
  const std::string_view v(text);
  if (v == "every") {
    s.every = true;
  } else if (v != "sampled") {
    s.error = std::string(kTimingVariable) + "=\"" + std::string(v) +
              "\": expected sampled (the default) or every";
  }
  return s;
}

}  // namespace ccltune::plugin::profiler
