// Which live processes carry an argument: how the cancellation tests find a job's ranks
// (`--job-id ID`) and its private redis-server (`--dir DIR`) without trusting the launcher's
// own account of them.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ccltune::testing {

// Alive and not a zombie (its /proc stat state is not Z).
bool Running(pid_t pid);
// Pids (other than this process) with an argv element equal to `arg`; zombies excluded.
std::vector<pid_t> PidsWithArg(const std::string& arg);
// Waits until no process carries `arg` or `seconds` pass; returns those still there.
std::vector<pid_t> WaitUntilNoneWithArg(const std::string& arg, double seconds);

}  // namespace ccltune::testing
