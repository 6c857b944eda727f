// Temp dirs and summary files for GPU tests (gpu_test_env.h).
#include "tests/gpu/gpu_test_env.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace ccltune::testing {

GpuTestDir::GpuTestDir(const std::string& tag) {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base ? base : "/tmp") + "/ccltune-gpu-" + tag + "-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp " + templ);
  path_ = templ;
}

GpuTestDir::~GpuTestDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void WriteSummary(const std::string& file_name, const std::string& text) {
  const char* dir = std::getenv("CCLTUNE_GPU_SUMMARY_DIR");
  if (dir == nullptr || dir[0] == '\0') return;
  std::ofstream(std::string(dir) + "/" + file_name) << text;
}

}  // namespace ccltune::testing
