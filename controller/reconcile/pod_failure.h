// Why a pod failed, in one line for the job's Failed condition and its events: the pod's own
// message, each container's exit code and reason, and the container's termination message
// (what our worker wrote to its terminationMessagePath, or with FallbackToLogsOnError the
// kubelet's tail of its log), cleaned so that a status never carries control characters, a
// password from a URL or more than a bounded amount of a rank's output.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ccltune::controller {

// The most of one container's termination message a failure message keeps.
inline constexpr std::size_t kTerminationLineMaxBytes = 1024;

// "pod NAME failed: exit code 1 (Error): <the rank's line>", from the pod's status
// (state.terminated, else lastState.terminated, of each container).
std::string PodFailureMessage(const nlohmann::json& pod);

// The line of a termination message worth showing: a one-line message as it is; from a log
// tail (several lines) the last line that says "error", else the last non-empty line. Control
// characters and terminal escape sequences removed, `scheme://user:password@` credentials
// masked, cut to kTerminationLineMaxBytes (on a UTF-8 boundary, marked with "...").
std::string TerminationLine(std::string_view message);

// `redis://user:secret@host` -> `redis://user:***@host`; `redis://secret@host` ->
// `redis://***@host`. Exposed for tests.
std::string RedactUrlCredentials(std::string_view text);

}  // namespace ccltune::controller
