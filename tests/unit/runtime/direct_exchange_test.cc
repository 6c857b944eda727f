// The direct exchange's protocol (runtime/direct/direct_exchange.h, issue 43) without a GPU:
// four ranks, each a DirectExchange with its own thread and a real abstract Unix socket, in
// one test process; a backend that logs what the GPU side would be asked to do. Each case
// checks every rank's exact log: ready, not ready (a buffer not registered), a reused
// segment (freed, then allocated again at the same address), and a peer that never posts.
#include "runtime/direct/direct_exchange.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ccltune::runtime::direct {
namespace {

constexpr int kWorld = 4;

std::string Hex(std::uintptr_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "%zx", static_cast<std::size_t>(v));
  return b;
}

// A peer's allocation, as this fake maps it: rank r's segment s at r's window.
std::uintptr_t MappedBase(int rank, std::uint64_t segment) {
  return 0x100000000000ull * static_cast<std::uintptr_t>(rank + 1) + segment * 0x10000000ull;
}

class LogBackend : public DirectBackend {
 public:
  core::Result<Exported> Export(const Segment& s) override {
    Add("export seg" + std::to_string(s.id));
    Exported e;
    // As long as CUDA's ("ipc" + 64 bytes) and then some: a handle must travel whole.
    e.handle = "h" + std::to_string(s.id) + std::string(80, '-');
    e.allocation_base = s.base;
    return e;
  }
  core::Result<std::uintptr_t> Open(int rank, std::uint64_t segment, const std::string& handle,
                                    int fd) override {
    const bool whole = handle == "h" + std::to_string(segment) + std::string(80, '-');
    Add("open r" + std::to_string(rank) + " seg" + std::to_string(segment) + " " +
        handle.substr(0, handle.find('-')) + (whole ? "" : " (cut)") + (fd >= 0 ? " fd" : ""));
    return MappedBase(rank, segment);
  }
  void Close(int rank, std::uint64_t segment) override {
    Add("close r" + std::to_string(rank) + " seg" + std::to_string(segment));
  }
  core::Status Publish(int slot, const SlotTable& t) override {
    std::string line = "publish " + std::to_string(slot);
    for (int r = 0; r < kWorld; ++r) line += " " + Hex(t.in[r]) + "/" + Hex(t.out[r]);
    Add(line);
    return core::Status::Ok();
  }
  core::Status Withdraw(int slot) override {
    Add("withdraw " + std::to_string(slot));
    return core::Status::Ok();
  }
  const void* SlotAddress(int slot) const override {
    return reinterpret_cast<const void*>(0x5000 + 144 * slot);
  }

  std::vector<std::string> Lines() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  void Add(std::string line) {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.push_back(std::move(line));
  }
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

// Rank r's registered segment: 1 MiB at its own fake address (never dereferenced).
std::uintptr_t SegmentBase(int rank, int generation = 0) {
  return 0x7f0000000000ull + 0x1000000000ull * static_cast<std::uintptr_t>(rank) +
         0x100000000ull * static_cast<std::uintptr_t>(generation);
}
constexpr std::size_t kSegmentBytes = 1 << 20;
constexpr std::uint64_t kBytes = 4096;

class Clique {
 public:
  // `rogue`: the rank that got another token (not from this communicator's rank 0).
  explicit Clique(const std::string& test, int rogue = -1) {
    const std::string name = "ccltune-test/" + std::to_string(::getpid()) + "/" + test;
    for (int r = 0; r < kWorld; ++r) {
      auto backend = std::make_unique<LogBackend>();
      backends_.push_back(backend.get());
      const std::string token(kTokenBytes, r == rogue ? 'b' : 'a');
      auto made = DirectExchange::Start(
          {name, token, r, kWorld, 64, -1, std::chrono::milliseconds(5000)}, std::move(backend));
      EXPECT_TRUE(made.ok()) << made.status().message();
      ranks_.push_back(std::move(made).value());
    }
  }
  DirectExchange& rank(int r) { return *ranks_[r]; }
  std::vector<std::string> Log(int r) const { return backends_[r]->Lines(); }

  // Rank r captures one all-reduce on its segment: input at +0x100, output at +0x200.
  const void* Capture(int r, std::uintptr_t base, std::uint64_t signature = 7) {
    return ranks_[r]->Capture({reinterpret_cast<const void*>(base + 0x100), kBytes,
                               reinterpret_cast<void*>(base + 0x200), kBytes, signature, true});
  }

  // Waits (bounded) until slot `slot` of every rank in `ranks` is in a state other than
  // the waiting ones; returns their states.
  std::vector<std::string> Settle(int slot, std::vector<int> ranks = {0, 1, 2, 3}) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::vector<std::string> states;
    while (std::chrono::steady_clock::now() < deadline) {
      states.clear();
      bool waiting = false;
      for (int r : ranks) {
        states.push_back(ranks_[r]->State(slot));
        waiting = waiting || states.back().rfind("waiting", 0) == 0;
      }
      if (!waiting) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return states;
  }

 private:
  std::vector<LogBackend*> backends_;
  std::vector<std::unique_ptr<DirectExchange>> ranks_;
};

std::uint64_t SegmentId(std::uintptr_t base) {
  return SegmentRegistry::Get().Find(reinterpret_cast<const void*>(base), 1)->id;
}

// What rank r publishes for slot `slot` when every rank r's buffers lie in segment seg[r].
std::string Published(int r, int slot, const std::vector<std::uint64_t>& seg,
                      const std::vector<std::uintptr_t>& base) {
  std::string line = "publish " + std::to_string(slot);
  for (int p = 0; p < kWorld; ++p) {
    const std::uintptr_t at = p == r ? base[p] : MappedBase(p, seg[p]);
    line += " " + Hex(at + 0x100) + "/" + Hex(at + 0x200);
  }
  return line;
}

std::vector<std::string> ReadyLog(int r, const std::vector<std::uint64_t>& seg,
                                  const std::vector<std::uintptr_t>& base) {
  std::vector<std::string> want = {"export seg" + std::to_string(seg[r])};
  for (int p = 0; p < kWorld; ++p) {
    if (p != r) {
      want.push_back("open r" + std::to_string(p) + " seg" + std::to_string(seg[p]) + " h" +
                     std::to_string(seg[p]));
    }
  }
  want.push_back(Published(r, 0, seg, base));
  return want;
}

class DirectExchangeTest : public ::testing::Test {
 protected:
  void Register(int generation = 0) {
    for (int r = 0; r < kWorld; ++r) {
      base_.push_back(SegmentBase(r, generation));
      SegmentRegistry::Get().Register(reinterpret_cast<const void*>(base_[r]), kSegmentBytes);
      seg_.push_back(SegmentId(base_[r]));
    }
  }
  void TearDown() override {
    for (std::uintptr_t b : base_) SegmentRegistry::Get().Deregister(reinterpret_cast<void*>(b));
  }
  std::vector<std::uintptr_t> base_;
  std::vector<std::uint64_t> seg_;
};

TEST_F(DirectExchangeTest, EveryRankPostedAndRegisteredPublishesTheSameCall) {
  Register();
  Clique c("ready");
  for (int r = 0; r < kWorld; ++r) {
    EXPECT_EQ(c.Capture(r, base_[r]), reinterpret_cast<const void*>(0x5000));
  }
  EXPECT_EQ(c.Settle(0), std::vector<std::string>(kWorld, "ready"));
  for (int r = 0; r < kWorld; ++r) EXPECT_EQ(c.Log(r), ReadyLog(r, seg_, base_)) << "rank " << r;
}

TEST_F(DirectExchangeTest, ABufferOutsideRegisteredSegmentsKeepsTheSlotStagedEverywhere) {
  Register();
  Clique c("unregistered");
  for (int r = 0; r < kWorld; ++r) {
    const std::uintptr_t base = r == 2 ? 0x6f0000000000ull : base_[r];  // rank 2: not registered
    c.Capture(r, base);
  }
  const std::vector<std::string> states = c.Settle(0);
  for (int r = 0; r < kWorld; ++r) {
    EXPECT_EQ(states[r], r == 2 ? "staged: buffer not in a registered segment"
                                : "staged: rank 2: buffer not in a registered segment");
    // Nothing is opened or published; rank 2 exports nothing.
    const std::vector<std::string> want =
        r == 2 ? std::vector<std::string>{}
               : std::vector<std::string>{"export seg" + std::to_string(seg_[r])};
    EXPECT_EQ(c.Log(r), want) << "rank " << r;
  }
}

TEST_F(DirectExchangeTest, AFreedSegmentWithdrawsBeforeDeregisterReturnsAndIsNeverReused) {
  Register();
  Clique c("reused");
  for (int r = 0; r < kWorld; ++r) c.Capture(r, base_[r]);
  ASSERT_EQ(c.Settle(0), std::vector<std::string>(kWorld, "ready"));
  // Rank 1's allocator frees its segment: withdrawn on rank 1 before Deregister returns.
  SegmentRegistry::Get().Deregister(reinterpret_cast<void*>(base_[1]));
  std::vector<std::string> want1 = ReadyLog(1, seg_, base_);
  want1.push_back("withdraw 0");
  EXPECT_EQ(c.Log(1), want1);
  EXPECT_EQ(c.rank(1).State(0), "staged: withdrawn, segment freed");
  // The same range comes back as a new segment; the next capture uses it, slot 0 stays out.
  const std::uint64_t old = seg_[1];
  SegmentRegistry::Get().Register(reinterpret_cast<void*>(base_[1]), kSegmentBytes);
  seg_[1] = SegmentId(base_[1]);
  EXPECT_NE(seg_[1], old);
  for (int r = 0; r < kWorld; ++r) c.Capture(r, base_[r]);
  EXPECT_EQ(c.Settle(1), std::vector<std::string>(kWorld, "ready"));
  for (int r = 0; r < kWorld; ++r) {
    if (r == 1) continue;
    // The peers heard it: withdraw slot 0, close the old mapping, then open the new one.
    const std::vector<std::string> log = c.Log(r);
    ASSERT_GE(log.size(), 7u) << "rank " << r;
    const std::vector<std::string> tail(log.begin() + 5, log.end());
    std::string pub = Published(r, 1, seg_, base_);
    EXPECT_EQ(tail,
              (std::vector<std::string>{
                  "withdraw 0", "close r1 seg" + std::to_string(old),
                  "open r1 seg" + std::to_string(seg_[1]) + " h" + std::to_string(seg_[1]), pub}))
        << "rank " << r;
    EXPECT_EQ(c.rank(r).State(0), "staged: withdrawn, rank 1's segment freed");
  }
  EXPECT_EQ(c.Log(1).back(), Published(1, 1, seg_, base_));
}

TEST_F(DirectExchangeTest, APeerThatNeverPostsLeavesTheSlotWaitingAndNothingPublished) {
  Register();
  Clique c("silent");
  for (int r = 0; r < 3; ++r) c.Capture(r, base_[r]);  // rank 3 never captures
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(c.rank(r).State(0), "waiting for rank 3");
    EXPECT_EQ(c.Log(r), std::vector<std::string>{"export seg" + std::to_string(seg_[r])});
  }
  EXPECT_EQ(c.rank(3).State(0), "no such slot");
  EXPECT_TRUE(c.Log(3).empty());
}

// A process that reaches the sockets but lacks the communicator's token is not heard: its posts
// are dropped, and it drops the real ranks' posts.
TEST_F(DirectExchangeTest, APostWithoutTheTokenIsDropped) {
  Register();
  Clique c("rogue", /*rogue=*/1);
  for (int r = 0; r < kWorld; ++r) c.Capture(r, base_[r]);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (int r = 0; r < kWorld; ++r) {
    EXPECT_EQ(c.rank(r).State(0), r == 1 ? "waiting for rank 0" : "waiting for rank 1") << r;
    EXPECT_EQ(c.Log(r), std::vector<std::string>{"export seg" + std::to_string(seg_[r])}) << r;
  }
}

TEST_F(DirectExchangeTest, SlotsRunOutAtTheSameCallOnEveryRank) {
  Register();
  Clique c("full");
  for (int k = 0; k < 64; ++k) ASSERT_NE(c.Capture(0, base_[0]), nullptr);
  EXPECT_EQ(c.Capture(0, base_[0]), nullptr);
  EXPECT_EQ(c.rank(0).slots(), 64);
}

TEST_F(DirectExchangeTest, MismatchedCallsInOneSlotStayStaged) {
  Register();
  Clique c("mismatch");
  for (int r = 0; r < kWorld; ++r) c.Capture(r, base_[r], r == 3 ? 8 : 7);
  const std::vector<std::string> states = c.Settle(0);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(states[r], "staged: rank 3 captured another call in this slot") << r;
  }
  EXPECT_EQ(states[3], "staged: rank 0 captured another call in this slot");
}

}  // namespace
}  // namespace ccltune::runtime::direct
