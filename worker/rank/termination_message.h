// The container's termination message: the one line that says why this process failed, in
// the file the kubelet reads into the pod's status.containerStatuses[].state.terminated
// .message (Kubernetes' terminationMessagePath, default /dev/termination-log). The operator
// copies it into the job's Failed condition (docs/design.md §6).
#pragma once

#include <cstddef>
#include <string_view>

namespace ccltune::worker {

// Kubernetes keeps at most this much of a termination message (the kubelet's
// MaxContainerTerminationMessageLength).
inline constexpr std::size_t kTerminationMessageMaxBytes = 4096;

// Writes `line` (cut to kTerminationMessageMaxBytes) to $CCLTUNE_TERMINATION_LOG when set,
// else to /dev/termination-log when it exists and is writable; elsewhere it does nothing.
// The first message of the container wins: a file that already holds one is left alone, so a
// pod's first failing rank names the cause, not the ranks that failed after it. Never throws,
// never blocks (a FIFO without a reader is skipped), keeps errno.
void WriteTerminationMessage(std::string_view line) noexcept;

}  // namespace ccltune::worker
