#include "worker/launcher/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace ccltune::worker {
namespace {

std::vector<std::string> MergedEnv(const std::map<std::string, std::string>& extra,
                                   const std::vector<std::string>& unset) {
  std::map<std::string, std::string> all;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) all[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& k : unset) all.erase(k);
  for (const auto& [k, v] : extra) all[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : all) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

// argv[0] as execve needs it: a path as given, a bare name looked up in PATH (done before
// fork, since the child may only make async-signal-safe calls).
std::string ResolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string candidate = dirs.substr(start, end - start) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return program;
}

// The child side of a bound spawn: only async-signal-safe calls until execve.
[[noreturn]] void ExecChild(const char* program, char* const* args, char* const* envs,
                            const SpawnOptions& o, const char* output_file, pid_t parent) {
  if (o.parent_death_signal != 0) {
    ::prctl(PR_SET_PDEATHSIG, o.parent_death_signal);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
  }
  if (o.keep_fd >= 0) ::fcntl(o.keep_fd, F_SETFD, 0);
  if (output_file != nullptr) {
    const int fd = ::open(output_file, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) ::_exit(127);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    if (fd > 2) ::close(fd);
  }
  ::execve(program, args, envs);
  ::_exit(127);
}

// posix_spawn cannot set a parent-death signal or hand down one descriptor: fork, then exec.
core::Result<pid_t> ForkExec(const std::vector<std::string>& argv, std::vector<std::string>& envs,
                             const SpawnOptions& o) {
  const std::string program = ResolveProgram(argv[0]);
  if (::access(program.c_str(), X_OK) != 0)
    return core::Unavailable("cannot start " + argv[0] + ": " + std::strerror(errno));
  std::vector<std::string> args = argv;
  auto cargs = CStrings(args);
  auto cenv = CStrings(envs);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return core::Unavailable("cannot start " + argv[0] + ": fork failed");
  if (pid == 0)
    ExecChild(program.c_str(), cargs.data(), cenv.data(), o,
              o.output_file.empty() ? nullptr : o.output_file.c_str(), parent);
  return pid;
}

core::Result<pid_t> PosixSpawn(const std::vector<std::string>& argv, std::vector<std::string>& envs,
                               const SpawnOptions& o) {
  std::vector<std::string> args = argv;
  auto cargs = CStrings(args);
  auto cenv = CStrings(envs);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!o.output_file.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, o.output_file.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, cargs[0], &actions, nullptr, cargs.data(), cenv.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return core::Unavailable("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

}  // namespace

core::Result<ChildProcess> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                               const SpawnOptions& options) {
  if (argv.empty()) return core::InvalidArgument("spawn: empty command");
  std::vector<std::string> envs = MergedEnv(options.env, options.unset);
  const bool bound = options.parent_death_signal != 0 || options.keep_fd >= 0;
  CCLTUNE_ASSIGN_OR_RETURN(pid_t pid,
                           bound ? ForkExec(argv, envs, options) : PosixSpawn(argv, envs, options));
  return ChildProcess(pid);
}

core::Result<ChildProcess> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                               const std::map<std::string, std::string>& env,
                                               const std::string& output_file,
                                               const std::vector<std::string>& unset) {
  return Spawn(argv, SpawnOptions{env, unset, output_file});
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept : pid_(o.pid_), exit_code_(o.exit_code_) {
  o.pid_ = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0 && !exit_code_) Stop(0);
    pid_ = o.pid_;
    exit_code_ = o.exit_code_;
    o.pid_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exit_code_) Stop(0);
}

std::optional<int> ChildProcess::Poll() {
  if (exit_code_ || pid_ <= 0) return exit_code_;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) exit_code_ = DecodeStatus(status);
  return exit_code_;
}

core::Result<int> ChildProcess::Wait(Deadline deadline) {
  while (true) {
    if (auto code = Poll()) return *code;
    if (Expired(deadline))
      return core::TimeoutError("process " + std::to_string(pid_) + " still running");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void ChildProcess::Signal(int sig) {
  if (pid_ > 0 && !exit_code_) ::kill(pid_, sig);
}

int ChildProcess::Stop(double grace_seconds) {
  if (auto code = Poll()) return *code;
  Signal(grace_seconds > 0 ? SIGTERM : SIGKILL);
  auto code = Wait(DeadlineIn(grace_seconds));
  if (code.ok()) return *code;
  Signal(SIGKILL);
  auto killed = Wait(DeadlineIn(5));
  return killed.ok() ? *killed : 137;
}

std::string SelfExecutable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "ccltune";
  return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace ccltune::worker
