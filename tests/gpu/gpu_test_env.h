// TEST HELPER: a temp directory the forked ranks share, and where summaries go
// ($CCLTUNE_GPU_SUMMARY_DIR, set by run_on_device.sh; nowhere when unset).
#pragma once

#include <string>

namespace ccltune::testing {

class GpuTestDir {
 public:
  explicit GpuTestDir(const std::string& tag);
  ~GpuTestDir();
  GpuTestDir(const GpuTestDir&) = delete;
  GpuTestDir& operator=(const GpuTestDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void WriteSummary(const std::string& file_name, const std::string& text);

}  // namespace ccltune::testing
