// Kubernetes time formats: metav1.Time (RFC 3339, seconds) and MicroTime (Lease renewTime).
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace ccltune::controller {

using Clock = std::chrono::system_clock;

std::string FormatTime(Clock::time_point t);       // "2026-11-22T08:00:00Z"
std::string FormatMicroTime(Clock::time_point t);  // "2026-11-22T08:00:00.123456Z"
// Accepts both forms (and a numeric offset "+00:00"); nullopt when it does not parse.
std::optional<Clock::time_point> ParseTime(const std::string& text);

}  // namespace ccltune::controller
