// A child process owned by RAII: spawned with argv and extra environment, waited for with
// a deadline, killed (SIGKILL) if still running when destroyed. Not thread-safe.
// A child can be bound to its parent (parent_death_signal): the kernel signals it when the
// thread that spawned it ends, even when the parent is killed with -9, so no rank or private
// redis-server outlives its launcher (docs/design.md §9).
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "worker/deadline.h"

namespace ccltune::worker {

struct SpawnOptions {
  std::map<std::string, std::string> env;  // adds to / overrides this process's environment
  std::vector<std::string> unset;          // variables left out
  std::string output_file;                 // stdout+stderr appended here; empty: inherited
  // PR_SET_PDEATHSIG: the signal the child gets when the spawning thread ends; 0 for none.
  // Spawn from a thread that lives as long as the child should (the main thread).
  int parent_death_signal = 0;
  int keep_fd = -1;  // an O_CLOEXEC descriptor the child inherits (a lock it must hold)
};

class ChildProcess {
 public:
  static core::Result<ChildProcess> Spawn(const std::vector<std::string>& argv,
                                          const SpawnOptions& options);
  // argv[0] is the program (path, or a name looked up in PATH). `env` adds to / overrides
  // this process's environment and `unset` leaves variables out. stdout/stderr are inherited
  // unless `output_file` is set.
  static core::Result<ChildProcess> Spawn(const std::vector<std::string>& argv,
                                          const std::map<std::string, std::string>& env = {},
                                          const std::string& output_file = "",
                                          const std::vector<std::string>& unset = {});
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // Non-blocking: the exit code if it has exited (128+signal when killed by a signal).
  std::optional<int> Poll();
  // Waits until exit or the deadline; Timeout if still running.
  core::Result<int> Wait(Deadline deadline);
  void Signal(int sig);
  // SIGTERM, then SIGKILL after `grace_seconds`; returns the exit code.
  int Stop(double grace_seconds);

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// Path of the running executable (/proc/self/exe).
std::string SelfExecutable();

}  // namespace ccltune::worker
