// Runs the real `ccltune` binary (path from $CCLTUNE_BIN, set by ctest) as a child process
// for integration tests: with a deadline, its combined output captured in a file.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "worker/launcher/child_process.h"

namespace ccltune::testing {

struct RunResult {
  int code = -1;       // exit code; -1 if it had to be killed at the deadline
  std::string output;  // stdout + stderr
  double seconds = 0;  // wall time
};

std::string CcltuneBin();
std::string ReadFile(const std::string& path);
// The lines of a process's output that are not empty: what its one-line errors are checked by.
std::vector<std::string> NonEmptyLines(const std::string& text);

// Runs to completion or kills it after `timeout_seconds`.
RunResult RunCcltune(const std::vector<std::string>& args,
                     const std::map<std::string, std::string>& env = {},
                     double timeout_seconds = 120);
// The same with another copy of the binary (one placed in an install layout, say).
RunResult RunBinary(const std::string& binary, const std::vector<std::string>& args,
                    const std::map<std::string, std::string>& env, double timeout_seconds);

// Starts it in the background; output goes to `output_file`.
worker::ChildProcess StartCcltune(const std::vector<std::string>& args,
                                  const std::map<std::string, std::string>& env,
                                  const std::string& output_file);

// `ccltune tune --ranks N --backend host --redis URL`, then `more`: the start every host-backend
// tune of these tests shares.
std::vector<std::string> HostTuneArgs(int ranks, const std::string& redis_url,
                                      const std::vector<std::string>& more);

// A small host-backend plan as YAML, for `--plan`.
std::string WritePlan(const TempDir& dir, const std::string& name, const std::string& yaml);

}  // namespace ccltune::testing
