#include "tests/metrics/child_process.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

namespace ccltune::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> Argv(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return argv;
}

// In the child between fork and exec: only async-signal-safe calls.
[[noreturn]] void ExecChild(std::vector<char*>& argv, int in_fd, int out_fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  if (in_fd >= 0) dup2(in_fd, 0);
  dup2(out_fd, 1);
  dup2(out_fd, 2);
  execvp(argv[0], argv.data());
  _exit(127);
}

// Feeds stdin and drains stdout of a running child until it exits or the deadline passes.
core::Status Pump(pid_t pid, int in_fd, int out_fd, std::string input, std::string& output,
                  Clock::time_point deadline, int& wstatus) {
  fcntl(out_fd, F_SETFL, O_NONBLOCK);
  if (in_fd >= 0) fcntl(in_fd, F_SETFL, O_NONBLOCK);
  bool out_open = true;
  while (out_open || in_fd >= 0) {
    if (Clock::now() >= deadline) return core::TimeoutError("command deadline passed");
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {in_fd, POLLOUT, 0}};
    poll(fds, in_fd >= 0 ? 2 : 1, 50);
    char buf[4096];
    ssize_t n = read(out_fd, buf, sizeof(buf));
    if (n > 0) output.append(buf, static_cast<std::size_t>(n));
    if (n == 0) out_open = false;
    if (in_fd >= 0) {
      ssize_t w = input.empty() ? 0 : write(in_fd, input.data(), input.size());
      if (w > 0) input.erase(0, static_cast<std::size_t>(w));
      if (input.empty() || (w < 0 && errno == EPIPE)) {
        close(in_fd);
        in_fd = -1;
      }
    }
  }
  while (waitpid(pid, &wstatus, WNOHANG) != pid) {
    if (Clock::now() >= deadline) return core::TimeoutError("command did not exit");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return core::Status::Ok();
}

}  // namespace

bool OnPath(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

core::Result<CommandOutput> RunCommand(const std::vector<std::string>& args,
                                       const std::string& stdin_data,
                                       std::chrono::milliseconds timeout) {
  if (!OnPath(args.at(0))) return core::NotFound(args[0] + " is not on PATH");
  signal(SIGPIPE, SIG_IGN);
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) < 0 || pipe2(out_pipe, O_CLOEXEC) < 0)
    return core::Internal("pipe failed");
  auto argv = Argv(args);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) ExecChild(argv, in_pipe[0], out_pipe[1], parent);
  close(in_pipe[0]);
  close(out_pipe[1]);
  CommandOutput result;
  int wstatus = 0;
  core::Status st = Pump(pid, in_pipe[1], out_pipe[0], stdin_data, result.output,
                         Clock::now() + timeout, wstatus);
  close(out_pipe[0]);
  if (!st.ok()) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return st.WithContext(args[0] + " (output so far: " + result.output + ")");
  }
  result.exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  return result;
}

core::Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(
    const std::vector<std::string>& args, const std::string& log_path) {
  if (!OnPath(args.at(0))) return core::NotFound(args[0] + " is not on PATH");
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return core::Internal("cannot open " + log_path);
  auto argv = Argv(args);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) ExecChild(argv, -1, log_fd, parent);
  close(log_fd);
  if (pid < 0) return core::Internal("fork failed");
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, log_path));
}

ChildProcess::~ChildProcess() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

bool ChildProcess::Exited() {
  if (pid_ <= 0) return true;
  if (waitpid(pid_, nullptr, WNOHANG) != pid_) return false;
  pid_ = -1;
  return true;
}

std::string ChildProcess::LogTail() const {
  std::ifstream in(log_path_);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return all.size() > 2048 ? all.substr(all.size() - 2048) : all;
}

namespace {

std::size_t Append(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

}  // namespace

core::Result<HttpAnswer> HttpGet(int port, const std::string& target,
                                 std::chrono::milliseconds timeout, const std::string& method) {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return core::Internal("curl_easy_init failed");
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + target;
  HttpAnswer answer;
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_NOBODY, method == "HEAD" ? 1L : 0L);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_HEADERFUNCTION, Append);
  curl_easy_setopt(curl.get(), CURLOPT_HEADERDATA, &answer.headers);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &answer.body);
  CURLcode rc = curl_easy_perform(curl.get());
  if (rc == CURLE_OPERATION_TIMEDOUT)
    return core::TimeoutError(url + ": " + curl_easy_strerror(rc));
  if (rc != CURLE_OK) return core::Unavailable(url + ": " + curl_easy_strerror(rc));
  long code = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &code);
  answer.code = static_cast<int>(code);
  return answer;
}

std::string UrlEncode(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace ccltune::testing
