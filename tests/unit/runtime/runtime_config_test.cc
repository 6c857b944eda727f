// The runtime's settings: defaults, the environment, explicit fields overriding it, and
// one clear error per bad field or variable naming it and what is allowed.
#include "runtime/runtime_config.h"

#include <gtest/gtest.h>

#include "tests/plugin/scoped_env.h"

namespace ccltune::runtime {
namespace {

using ccltune::testing::ScopedEnv;

std::string ErrorOf(const ccltuneConfig_t& c) {
  auto r = ResolveConfig(&c);
  return r.ok() ? "" : r.status().message();
}

TEST(RuntimeConfig, DefaultsAndEnvironment) {
  ScopedEnv env({{"CCLTUNE_RESULTS_FILE", "/tmp/winners.json"},
                 {"CCLTUNE_POOL_BYTES", "1048576"},
                 {"CCLTUNE_PEER_MEMORY", "0"}});
  auto r = ResolveConfig(nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->source.results_file, "/tmp/winners.json");
  EXPECT_EQ(r->pool_bytes, 1048576u);
  EXPECT_FALSE(r->peer_memory);
  EXPECT_EQ(r->staging_bytes, kDefaultStagingBytes);
  EXPECT_EQ(r->timeout, std::chrono::milliseconds(30000));
  EXPECT_EQ(r->source.load_timeout, std::chrono::milliseconds(100));
}

// Holding one-shot results in place is on unless CCLTUNE_HOLD_IN_PLACE is 0; anything but 0
// or 1 is one error naming it.
TEST(RuntimeConfig, HoldInPlaceIsOnUnlessTurnedOff) {
  {
    ScopedEnv env({{"CCLTUNE_PEER_MEMORY", "1"}});
    auto r = ResolveConfig(nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->hold_in_place);
  }
  {
    ScopedEnv env({{"CCLTUNE_HOLD_IN_PLACE", "0"}});
    auto r = ResolveConfig(nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->hold_in_place);
  }
  ScopedEnv env({{"CCLTUNE_HOLD_IN_PLACE", "yes"}});
  auto r = ResolveConfig(nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "CCLTUNE_HOLD_IN_PLACE: 'yes' is not one of 1 (the default: one-shot pull in place "
            "holds its results in registers), 0 (it does not)");
}

// The in-program trial is off unless CCLTUNE_CONFIRM_CALLS names its calls per side, 1..64;
// anything else is one error naming the variable and what it allows.
TEST(RuntimeConfig, ConfirmCallsAreOffUnlessSet) {
  {
    ScopedEnv env({{"CCLTUNE_PEER_MEMORY", "1"}});
    auto r = ResolveConfig(nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->confirm_calls, 0);
  }
  for (const char* ok : {"0", "8", "64"}) {
    ScopedEnv env({{"CCLTUNE_CONFIRM_CALLS", ok}});
    auto r = ResolveConfig(nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->confirm_calls, std::stoi(ok));
  }
  for (const char* bad : {"65", "-1", "8x", "eight", " 8"}) {
    ScopedEnv env({{"CCLTUNE_CONFIRM_CALLS", bad}});
    auto r = ResolveConfig(nullptr);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(), "CCLTUNE_CONFIRM_CALLS='" + std::string(bad) +
                                        "' must be 0 (off) .. 64: timed calls per side of each "
                                        "tuned size's in-program trial");
  }
}

// libccltune-nccl's programs pass no config: the environment sizes the staging area, and the
// config's field still wins.
TEST(RuntimeConfig, StagingBytesFromTheEnvironment) {
  ScopedEnv env({{"CCLTUNE_STAGING_BYTES", "512MiB"}, {"CCLTUNE_PEER_MEMORY", "1"}});
  auto r = ResolveConfig(nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->staging_bytes, std::size_t{512} << 20);
  ccltuneConfig_t c = CCLTUNE_CONFIG_INITIALIZER;
  c.stagingBytes = std::size_t{32} << 20;
  auto f = ResolveConfig(&c);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->staging_bytes, std::size_t{32} << 20);
}

TEST(RuntimeConfig, FieldsOverrideTheEnvironment) {
  ScopedEnv env({{"CCLTUNE_PEER_MEMORY", "0"}, {"CCLTUNE_POOL_BYTES", "0"}});
  ccltuneConfig_t c = CCLTUNE_CONFIG_INITIALIZER;
  c.resultsFile = "/x.json";
  c.fingerprint = "abc";
  c.peerMemory = 1;
  c.poolBytes = 1 << 20;
  c.timeoutMs = 500;
  c.loadTimeoutMs = 250;
  auto r = ResolveConfig(&c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->peer_memory);
  EXPECT_EQ(r->source.results_file, "/x.json");
  EXPECT_EQ(r->fingerprint, "abc");
  EXPECT_EQ(r->fingerprint_source, "ccltuneConfig_t.fingerprint");
  EXPECT_EQ(r->pool_bytes, 1u << 20);
  EXPECT_EQ(r->timeout, std::chrono::milliseconds(500));
  EXPECT_EQ(r->source.load_timeout, std::chrono::milliseconds(250));
}

TEST(RuntimeConfig, EachBadFieldIsNamed) {
  ScopedEnv env({{"CCLTUNE_PEER_MEMORY", "1"}, {"CCLTUNE_POOL_BYTES", "0"}});
  ccltuneConfig_t c = CCLTUNE_CONFIG_INITIALIZER;
  c.size = 8;
  EXPECT_NE(ErrorOf(c).find("ccltuneConfig_t.size=8"), std::string::npos) << ErrorOf(c);
  c = CCLTUNE_CONFIG_INITIALIZER;
  c.version = 99999;
  EXPECT_NE(ErrorOf(c).find("ccltuneConfig_t.version"), std::string::npos) << ErrorOf(c);
  c = CCLTUNE_CONFIG_INITIALIZER;
  c.timeoutMs = 5;
  EXPECT_NE(ErrorOf(c).find("timeoutMs=5: allowed 100..600000"), std::string::npos) << ErrorOf(c);
  c = CCLTUNE_CONFIG_INITIALIZER;
  c.loadTimeoutMs = 20000;
  EXPECT_NE(ErrorOf(c).find("loadTimeoutMs=20000"), std::string::npos) << ErrorOf(c);
  c = CCLTUNE_CONFIG_INITIALIZER;
  c.peerMemory = 2;
  EXPECT_NE(ErrorOf(c).find("peerMemory=2"), std::string::npos) << ErrorOf(c);
  c = CCLTUNE_CONFIG_INITIALIZER;
  c.poolBytes = kMaxPoolBytes + 1;
  EXPECT_NE(ErrorOf(c).find("poolBytes="), std::string::npos) << ErrorOf(c);
  c = CCLTUNE_CONFIG_INITIALIZER;
  c.redisUrl = "http://nope:secret@host";
  const std::string e = ErrorOf(c);
  EXPECT_NE(e.find("ccltuneConfig_t.redisUrl"), std::string::npos) << e;
  EXPECT_EQ(e.find("secret"), std::string::npos) << e;  // never repeats a password
}

// Minor versions only add entry points (0.2: the epilogue calls): a caller built against
// 0.1 runs on; a newer minor or another major than the library's is refused.
TEST(RuntimeConfig, OlderMinorVersionsAreAccepted) {
  ScopedEnv env({{"CCLTUNE_PEER_MEMORY", "1"}, {"CCLTUNE_POOL_BYTES", "0"}});
  ccltuneConfig_t c = CCLTUNE_CONFIG_INITIALIZER;
  EXPECT_EQ(c.version, 200);
  c.version = 100;
  EXPECT_EQ(ErrorOf(c), "");
  c.version = 203;  // a patch level is no contract
  EXPECT_EQ(ErrorOf(c), "");
  for (int bad : {300, 10200, 99, -1}) {
    c.version = bad;
    EXPECT_NE(ErrorOf(c).find("ccltuneConfig_t.version=" + std::to_string(bad)), std::string::npos)
        << bad;
  }
}

TEST(RuntimeConfig, BadEnvironmentIsNamed) {
  {
    ScopedEnv env({{"CCLTUNE_POOL_BYTES", "1GB"}, {"CCLTUNE_PEER_MEMORY", "1"}});
    auto r = ResolveConfig(nullptr);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("CCLTUNE_POOL_BYTES='1GB'"), std::string::npos);
  }
  {
    ScopedEnv env({{"CCLTUNE_STAGING_BYTES", "lots"}, {"CCLTUNE_PEER_MEMORY", "1"}});
    auto r = ResolveConfig(nullptr);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("CCLTUNE_STAGING_BYTES='lots'"), std::string::npos)
        << r.status().message();
  }
  {
    ScopedEnv env({{"CCLTUNE_PEER_MEMORY", "yes"}, {"CCLTUNE_POOL_BYTES", "0"}});
    auto r = ResolveConfig(nullptr);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("CCLTUNE_PEER_MEMORY"), std::string::npos);
  }
  {
    ScopedEnv env({{"CCLTUNE_PLUGIN_TIMEOUT_MS", "0"}, {"CCLTUNE_POOL_BYTES", "0"}});
    EXPECT_FALSE(ResolveConfig(nullptr).ok());
  }
  for (const char* bad : {"3s", "99", "600001", "-5", ""}) {
    ScopedEnv env({{"CCLTUNE_TIMEOUT_MS", bad}, {"CCLTUNE_POOL_BYTES", "0"}});
    auto r = ResolveConfig(nullptr);
    if (std::string(bad).empty()) {  // unset and empty are alike: the default
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->timeout, std::chrono::milliseconds(30000));
      continue;
    }
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("CCLTUNE_TIMEOUT_MS"), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("100..600000"), std::string::npos) << r.status().message();
  }
}

// The peer-wait timeout (issue 36): from the environment for programs that cannot pass a
// config (libccltune-nccl), the field still overriding it.
TEST(RuntimeConfig, TimeoutFromTheEnvironmentAndTheField) {
  ScopedEnv env({{"CCLTUNE_TIMEOUT_MS", "3000"}, {"CCLTUNE_POOL_BYTES", "0"}});
  auto r = ResolveConfig(nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->timeout, std::chrono::milliseconds(3000));
  ccltuneConfig_t c = CCLTUNE_CONFIG_INITIALIZER;
  r = ResolveConfig(&c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->timeout, std::chrono::milliseconds(3000));
  c.timeoutMs = 700;
  r = ResolveConfig(&c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->timeout, std::chrono::milliseconds(700));
  c.timeoutMs = 99;
  EXPECT_NE(ErrorOf(c).find("ccltuneConfig_t.timeoutMs=99: allowed 100..600000"), std::string::npos)
      << ErrorOf(c);
}

}  // namespace
}  // namespace ccltune::runtime
