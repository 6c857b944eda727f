// WriteTerminationMessage: the container's termination message (issue 44) goes to
// $CCLTUNE_TERMINATION_LOG, is bounded to Kubernetes' 4096 bytes, and the first one wins.
#include "worker/rank/termination_message.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace ccltune::worker {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TerminationMessage : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/ccltune-termlog-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ + "/termination-log";
    setenv("CCLTUNE_TERMINATION_LOG", path_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("CCLTUNE_TERMINATION_LOG");
    unlink(path_.c_str());
    unlink((dir_ + "/fifo").c_str());
    rmdir(dir_.c_str());
  }
  std::string dir_, path_;
};

TEST_F(TerminationMessage, FirstLineWinsAndErrnoIsKept) {
  errno = EAGAIN;
  WriteTerminationMessage("ccltune worker: rank 0: error: lost the Redis cache");
  EXPECT_EQ(errno, EAGAIN);
  WriteTerminationMessage("ccltune worker: rank 0: error: a later, lesser complaint");
  EXPECT_EQ(Slurp(path_), "ccltune worker: rank 0: error: lost the Redis cache");
}

TEST_F(TerminationMessage, BoundedToKubernetesLimit) {
  WriteTerminationMessage(std::string(10000, 'x'));
  EXPECT_EQ(Slurp(path_).size(), kTerminationMessageMaxBytes);
}

TEST_F(TerminationMessage, AFifoWithoutReaderNeverBlocks) {
  std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  setenv("CCLTUNE_TERMINATION_LOG", fifo.c_str(), 1);
  WriteTerminationMessage("nobody reads this");  // returns at once: the test would hang
  SUCCEED();
}

TEST_F(TerminationMessage, UnwritablePathIsIgnored) {
  setenv("CCLTUNE_TERMINATION_LOG", "/nonexistent-dir/termination-log", 1);
  WriteTerminationMessage("lost");  // no throw, no crash, nothing created
  struct stat st {};
  EXPECT_NE(stat("/nonexistent-dir", &st), 0);
}

}  // namespace
}  // namespace ccltune::worker
