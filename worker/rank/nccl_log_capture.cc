// NcclLogCapture (nccl_log_capture.h).
#include "worker/rank/nccl_log_capture.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/log.h"

namespace ccltune::worker {
namespace {

// NCCL expands %h and %p in NCCL_DEBUG_FILE; a job id must not turn into either.
std::string Plain(std::string s) {
  for (char& c : s)
    if (c == '%' || c == '/') c = '_';
  return s;
}

}  // namespace

NcclLogCapture NcclLogCapture::Start(const std::string& job_id, int attempt, int rank) {
  NcclLogCapture c;
  for (const char* name : {"NCCL_DEBUG", "NCCL_DEBUG_FILE"}) {
    if (const char* v = std::getenv(name); v != nullptr && v[0] != '\0') {
      c.problem_ = std::string(name) + "=" + v + " was set by the user: NCCL's log not read";
      return c;
    }
  }
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  c.path_ = ((ec ? std::filesystem::path("/tmp") : dir) /
             Plain("ccltune-nccl-" + job_id + "-a" + std::to_string(attempt) + "-r" +
                   std::to_string(rank) + ".log"))
                .string();
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", "INIT,NET", 1);
  setenv("NCCL_DEBUG_FILE", c.path_.c_str(), 1);
  core::LogInfo("NCCL's INFO log (INIT,NET) goes to " + c.path_);
  return c;
}

std::vector<std::string> NcclLogCapture::SetVariables() const {
  if (!problem_.empty()) return {};
  return {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"};
}

core::Result<core::NcclInitLog> NcclLogCapture::Read() {
  if (!problem_.empty()) return core::FailedPrecondition(problem_);
  std::ifstream in(path_);
  if (!in) return core::FailedPrecondition("NCCL wrote no log to " + path_);
  core::NcclInitLog log = core::ParseNcclInitLog(in);
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  return log;
}

}  // namespace ccltune::worker
