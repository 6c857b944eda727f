// What the NCCL backend does to the environment before NCCL's first call (nccl_env.h's
// SetUpTuner), without a GPU: it points NCCL_TUNER_PLUGIN at the in-process tuner and leaves
// NCCL's other variables as the user set them. NCCL_NVLS_ENABLE=1 reaches NCCL unchanged; an unset
// one stays unset.
#include "worker/nccl/nccl_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace ccltune::worker::nccl {
namespace {

constexpr const char* kMulticastVars[] = {"NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                          "NVSHMEM_DISABLE_NVLS"};

// Restores one variable as the test found it.
class SavedEnv {
 public:
  explicit SavedEnv(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) value_ = v;
  }
  ~SavedEnv() {
    if (value_) {
      setenv(name_, value_->c_str(), /*overwrite=*/1);
    } else {
      unsetenv(name_);
    }
  }
  SavedEnv(const SavedEnv&) = delete;
  SavedEnv& operator=(const SavedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> value_;
};

// The backend's set-up before NCCL's first call (NcclBackend::Start calls SetUpTuner), which
// must succeed here: the built plugin loaded and named in NCCL_TUNER_PLUGIN.
void PrepareLikeTheBackend() {
  TunerSetup setup = SetUpTuner();
  ASSERT_TRUE(setup.tuner.has_value()) << setup.problem;
  const char* plugin = std::getenv("NCCL_TUNER_PLUGIN");
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(std::string(plugin), setup.tuner->path());
}

class NcclEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(std::getenv("CCLTUNE_INPROC_TUNER"), nullptr)
        << "ctest sets CCLTUNE_INPROC_TUNER to the built plugin";
  }
  SavedEnv plugin_{"NCCL_TUNER_PLUGIN"};
  SavedEnv nvls_{kMulticastVars[0]};
  SavedEnv torch_{kMulticastVars[1]};
  SavedEnv nvshmem_{kMulticastVars[2]};
};

TEST_F(NcclEnvTest, NvlsEnabledByTheUserReachesNcclUnchanged) {
  setenv("NCCL_NVLS_ENABLE", "1", /*overwrite=*/1);
  PrepareLikeTheBackend();
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  ASSERT_NE(nvls, nullptr);
  EXPECT_EQ(std::string(nvls), "1");
}

TEST_F(NcclEnvTest, UnsetMulticastVariablesStayUnset) {
  for (const char* name : kMulticastVars) unsetenv(name);
  PrepareLikeTheBackend();
  for (const char* name : kMulticastVars) {
    EXPECT_EQ(std::getenv(name), nullptr) << name << " was set by the backend";
  }
}

}  // namespace
}  // namespace ccltune::worker::nccl
