#include "tests/integration/ccltune_process.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ccltune::testing {

std::string CcltuneBin() {
  const char* bin = std::getenv("CCLTUNE_BIN");
  if (!bin || !*bin) throw std::runtime_error("CCLTUNE_BIN is not set (run through ctest)");
  return bin;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> NonEmptyLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

namespace {

worker::ChildProcess Start(const std::string& binary, const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env,
                           const std::string& output_file) {
  std::vector<std::string> argv{binary};
  argv.insert(argv.end(), args.begin(), args.end());
  auto child = worker::ChildProcess::Spawn(argv, env, output_file);
  if (!child.ok()) throw std::runtime_error(child.status().ToString());
  return std::move(child).value();
}

}  // namespace

worker::ChildProcess StartCcltune(const std::vector<std::string>& args,
                                  const std::map<std::string, std::string>& env,
                                  const std::string& output_file) {
  return Start(CcltuneBin(), args, env, output_file);
}

RunResult RunCcltune(const std::vector<std::string>& args,
                     const std::map<std::string, std::string>& env, double timeout_seconds) {
  return RunBinary(CcltuneBin(), args, env, timeout_seconds);
}

RunResult RunBinary(const std::string& binary, const std::vector<std::string>& args,
                    const std::map<std::string, std::string>& env, double timeout_seconds) {
  TempDir dir("ccltune-run");
  const std::string out = dir.File("output.txt");
  const auto t0 = worker::Clock::now();
  auto child = Start(binary, args, env, out);
  RunResult r;
  auto code = child.Wait(worker::DeadlineIn(timeout_seconds));
  r.code = code.ok() ? *code : (child.Stop(0), -1);
  r.seconds = std::chrono::duration<double>(worker::Clock::now() - t0).count();
  r.output = ReadFile(out);
  return r;
}

std::vector<std::string> HostTuneArgs(int ranks, const std::string& redis_url,
                                      const std::vector<std::string>& more) {
  std::vector<std::string> args{"tune",    "--ranks", std::to_string(ranks), "--backend", "host",
                                "--redis", redis_url};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string WritePlan(const TempDir& dir, const std::string& name, const std::string& yaml) {
  const std::string path = dir.File(name);
  std::ofstream(path) << yaml;
  return path;
}

}  // namespace ccltune::testing
