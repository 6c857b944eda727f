#include "core/plan/choice.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace ccltune::core {
namespace {

std::string Canon(const std::string& s, const std::string& backend = "") {
  auto r = ParseChoice(s, backend);
  return r.ok() ? r->ToString() : "ERROR: " + r.status().message();
}

std::string Error(const std::string& s, const std::string& backend = "") {
  auto r = ParseChoice(s, backend);
  return r.ok() ? "" : r.status().message();
}

TEST(Choice, CanonicalFormSortsParams) {
  EXPECT_EQ(Canon("nccl"), "nccl");
  EXPECT_EQ(Canon("nccl:proto=ll,algo=ring"), "nccl:algo=ring,proto=ll");
  EXPECT_EQ(Canon("oneshot:threads=512,blocks=8"), "oneshot:blocks=8,threads=512");
  EXPECT_EQ(Canon("twoshot:mode=push,blocks=1,threads=1024", "nccl"),
            "twoshot:blocks=1,mode=push,threads=1024");
  EXPECT_EQ(Canon("nccl:ctas=08"), "nccl:ctas=8");
  EXPECT_EQ(Canon("nccl:p2pchunk=64KiB"), "nccl:p2pchunk=65536");
  EXPECT_EQ(Canon("ring", "host"), "ring");
  EXPECT_EQ(Canon("rs+ag", "host"), "rs+ag");
  EXPECT_EQ(Canon("rs+ag", "nccl"), "rs+ag");
}

TEST(Choice, BackendRestrictsBases) {
  EXPECT_NE(Error("ring", "nccl").find("not a known choice for backend nccl"), std::string::npos);
  EXPECT_NE(Error("nccl", "host").find("allowed: ring, recursive-doubling"), std::string::npos);
  EXPECT_NE(Error("ring", "gpu").find("backend 'gpu'"), std::string::npos);
  EXPECT_EQ(DefaultChoice("nccl"), "nccl");
  EXPECT_EQ(DefaultChoice("host"), "ring");
  const auto& host = ChoiceBases("host");
  EXPECT_EQ(host, (std::vector<std::string>{"ring", "recursive-doubling", "direct", "pairwise",
                                            "binomial", "rs+ag"}));
}

TEST(Choice, RejectsBadParamsNamingWhatIsAllowed) {
  EXPECT_NE(Error("nccl:algo=nvls").find("must be one of ring|tree"), std::string::npos);
  EXPECT_NE(Error("nccl:proto=LL").find("ll|ll128|simple"), std::string::npos);
  EXPECT_NE(Error("nccl:ctas=0").find("1..64"), std::string::npos);
  EXPECT_NE(Error("nccl:ctas=65").find("1..64"), std::string::npos);
  EXPECT_NE(Error("nccl:p2pchunk=3000").find("power-of-two"), std::string::npos);
  EXPECT_NE(Error("oneshot:threads=100").find("multiple of 32"), std::string::npos);
  EXPECT_NE(Error("oneshot:blocks=2000").find("1..1024"), std::string::npos);
  EXPECT_NE(Error("oneshot:mode=both").find("pull|push|ll"), std::string::npos);
  EXPECT_NE(Error("nccl:foo=1").find("allowed: algo, proto, ctas, p2pchunk"), std::string::npos);
  EXPECT_NE(Error("ring:x=1", "host").find("it takes none"), std::string::npos);
  EXPECT_NE(Error("nccl:algo").find("key=value"), std::string::npos);
  EXPECT_NE(Error("nccl:algo=ring,algo=tree").find("given twice"), std::string::npos);
  EXPECT_NE(Error("nccl:").find("no parameters"), std::string::npos);
  EXPECT_NE(Error("nccl:algo=ring,").find("key=value"), std::string::npos);
  EXPECT_NE(Error("").find("not a known choice"), std::string::npos);
}

TEST(Choice, TestHangOnlyWhenEnabled) {
  unsetenv("CCLTUNE_ENABLE_TEST_CHOICES");
  EXPECT_NE(Error("test-hang", "host").find("not a known choice"), std::string::npos);
  setenv("CCLTUNE_ENABLE_TEST_CHOICES", "1", 1);
  EXPECT_EQ(Canon("test-hang", "host"), "test-hang");
  EXPECT_EQ(Canon("test-hang", "nccl"), "test-hang");
  unsetenv("CCLTUNE_ENABLE_TEST_CHOICES");
}

}  // namespace
}  // namespace ccltune::core
