#include "tests/integration/process_scan.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace ccltune::testing {
namespace {

bool HasArg(const std::filesystem::path& proc, const std::string& arg) {
  std::ifstream in(proc / "cmdline", std::ios::binary);
  std::string item;
  while (std::getline(in, item, '\0'))
    if (item == arg) return true;
  return false;
}

}  // namespace

bool Running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

std::vector<pid_t> PidsWithArg(const std::string& arg) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == ::getpid() || !HasArg(e.path(), arg) || !Running(pid)) continue;
    out.push_back(pid);
  }
  return out;
}

std::vector<pid_t> WaitUntilNoneWithArg(const std::string& arg, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  auto left = PidsWithArg(arg);
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    left = PidsWithArg(arg);
  }
  return left;
}

}  // namespace ccltune::testing
