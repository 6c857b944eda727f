// Logging goes to stderr with the prefix; CCLTUNE_LOG_LEVEL overrides the level.
#include "core/base/log.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace ccltune::core {
namespace {

TEST(Log, PrefixAndLevel) {
  unsetenv("CCLTUNE_LOG_LEVEL");
  InitLogging("rank 3", LogLevel::kInfo);
  ::testing::internal::CaptureStderr();
  LogInfo("hello");
  LogDebug("hidden");
  std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("[rank 3] hello"), std::string::npos) << out;
  EXPECT_EQ(out.find("hidden"), std::string::npos) << out;
}

TEST(Log, EnvironmentOverridesLevel) {
  setenv("CCLTUNE_LOG_LEVEL", "debug", 1);
  InitLogging("w", LogLevel::kError);
  ::testing::internal::CaptureStderr();
  LogDebug("shown");
  std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("shown"), std::string::npos) << out;
  setenv("CCLTUNE_LOG_LEVEL", "loud", 1);
  ::testing::internal::CaptureStderr();
  InitLogging("w", LogLevel::kWarn);
  out = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("CCLTUNE_LOG_LEVEL='loud' ignored"), std::string::npos) << out;
  unsetenv("CCLTUNE_LOG_LEVEL");
}

}  // namespace
}  // namespace ccltune::core
