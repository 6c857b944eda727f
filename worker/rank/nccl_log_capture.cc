// NcclLogCapture (nccl_log_capture.h).
#include "worker/rank/nccl_log_capture.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/base/log.h"
#include "worker/rank/temp_file.h"

namespace ccltune::worker {

NcclLogCapture NcclLogCapture::Start(const std::string& job_id, int attempt, int rank) {
  NcclLogCapture c;
  for (const char* name : {"NCCL_DEBUG", "NCCL_DEBUG_FILE"}) {
    if (const char* v = std::getenv(name); v != nullptr && v[0] != '\0') {
      c.problem_ = std::string(name) + "=" + v + " was set by the user: NCCL's log not read";
      return c;
    }
  }
  c.path_ = TempFilePath("ccltune-nccl-" + job_id + "-a" + std::to_string(attempt) + "-r" +
                         std::to_string(rank) + ".log");
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
