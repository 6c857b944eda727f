// Environment set-up before NCCL's first call (nccl_env.h).
#include "worker/nccl/nccl_env.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <utility>

#include "core/base/log.h"

namespace ccltune::worker::nccl {
namespace {

constexpr const char* kTunerFile = "libccltune-inproc-tuner.so";

}  // namespace

core::Result<std::string> FindInprocTuner() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("CCLTUNE_INPROC_TUNER"); env != nullptr && env[0] != '\0') {
    std::error_code ec;
    const fs::path p = fs::absolute(env, ec);
    if (!ec && fs::exists(p, ec)) return p.string();
    return core::NotFound(std::string("CCLTUNE_INPROC_TUNER=") + env + " does not exist");
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return core::NotFound("cannot read /proc/self/exe: " + ec.message());
  // The build tree keeps it next to the binary; an install (the container image) in
  // <prefix>/lib beside <prefix>/bin.
  const fs::path next_to_exe = exe.parent_path() / kTunerFile;
  if (fs::exists(next_to_exe, ec)) return next_to_exe.string();
  const fs::path installed = exe.parent_path().parent_path() / "lib" / kTunerFile;
  if (fs::exists(installed, ec)) return installed.string();
  return core::NotFound(std::string(kTunerFile) + " not found next to " + exe.string() +
                        " nor in " + installed.parent_path().string() +
                        ", and CCLTUNE_INPROC_TUNER is unset");
}

void UseTunerPlugin(const std::string& path) {
  const char* old = std::getenv("NCCL_TUNER_PLUGIN");
  if (old != nullptr && path != old) {
    core::LogWarn(std::string("NCCL_TUNER_PLUGIN=") + old + " replaced by " + path +
                  " while tuning (forced choices need the in-process tuner)");
  }
  setenv("NCCL_TUNER_PLUGIN", path.c_str(), /*overwrite=*/1);
}

TunerSetup SetUpTuner() {
  TunerSetup setup;
  core::Result<std::string> path = FindInprocTuner();
  if (!path.ok()) {
    setup.problem = path.status().message();
    return setup;
  }
  core::Result<TunerControl> t = TunerControl::Load(path.value());
  if (!t.ok()) {
    setup.problem = t.status().message();
    return setup;
  }
  UseTunerPlugin(path.value());
  setup.tuner.emplace(std::move(t).value());
  return setup;
}

}  // namespace ccltune::worker::nccl
