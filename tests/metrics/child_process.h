// Test fixtures for real external programs (promtool, prometheus, prometheus-pushgateway):
// run one to completion with a deadline, or keep a server alive for the test's duration.
// Children get PR_SET_PDEATHSIG so a crashed test leaves nothing behind. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace ccltune::testing {

struct CommandOutput {
  int exit_code = -1;  // -1 when killed by a signal or the deadline
  std::string output;  // stdout and stderr together
};

// Runs argv[0] (searched on PATH) with `stdin_data` on its standard input; kills it at the
// deadline (Timeout). NotFound when the program is not on PATH.
core::Result<CommandOutput> RunCommand(const std::vector<std::string>& argv,
                                       const std::string& stdin_data,
                                       std::chrono::milliseconds timeout);

// True when `program` is an executable on PATH.
bool OnPath(const std::string& program);

// A long-running child whose stdout/stderr go to `log_path`; SIGKILLed on destruction.
class ChildProcess {
 public:
  static core::Result<std::unique_ptr<ChildProcess>> Spawn(const std::vector<std::string>& argv,
                                                           const std::string& log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool Exited();                // reaps it if it has exited
  std::string LogTail() const;  // last ~2 KB of its log, for failure messages

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  pid_t pid_;
  std::string log_path_;
};

// `method` http://127.0.0.1:port/target within `timeout` (libcurl; headers as received).
struct HttpAnswer {
  int code = 0;
  std::string headers;
  std::string body;
};
core::Result<HttpAnswer> HttpGet(int port, const std::string& target,
                                 std::chrono::milliseconds timeout,
                                 const std::string& method = "GET");
std::string UrlEncode(const std::string& s);

}  // namespace ccltune::testing
