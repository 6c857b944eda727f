#include "worker/launcher/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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

}  // namespace

core::Result<ChildProcess> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                               const std::map<std::string, std::string>& env,
                                               const std::string& output_file,
                                               const std::vector<std::string>& unset) {
  if (argv.empty()) return core::InvalidArgument("spawn: empty command");
  std::vector<std::string> args = argv, envs = MergedEnv(env, unset);
  auto cargs = CStrings(args);
  auto cenv = CStrings(envs);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!output_file.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, output_file.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, cargs[0], &actions, nullptr, cargs.data(), cenv.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return core::Unavailable("cannot start " + argv[0] + ": " + std::strerror(rc));
  return ChildProcess(pid);
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
