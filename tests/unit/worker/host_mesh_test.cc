// The TCP mesh under failure: large simultaneous ring steps, deadlines naming the silent
// rank, a peer whose sockets close, a clean goodbye, cancellation, and stray connections
// during setup. Time bounds are generous upper limits (fault detection), never speed claims.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "tests/unit/worker/host_test_util.h"
#include "worker/host/algorithms.h"
#include "worker/host/mesh_setup.h"
#include "core/base/unique_fd.h"

namespace ccltune::worker::host {
namespace {

using testing::FlagCancel;
using testing::HostRanks;
using testing::RunOnRanks;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One float sum allReduce with `fn` on rank r's backend.
core::Status AllReduceOnce(HostBackend& b, AlgoFn fn, const char* name, double timeout_s) {
  std::vector<float> in(1000, 1.0f), out(1000);
  CollArgs args{core::Op::kAllReduce, core::Dtype::kFp32,
                core::RedOp::kSum,    in.data(),
                out.data(),           in.size(),
                sizeof(float),        GetReduceFn(core::Dtype::kFp32, core::RedOp::kSum).value()};
  return b.comm().Run("allReduce", name, fn, args, DeadlineIn(timeout_s));
}

void CreateAll(HostRanks& ranks, const CancelToken& cancel) {
  for (const core::Status& st : ranks.Create(cancel)) ASSERT_TRUE(st.ok()) << st.ToString();
}

TEST(HostMeshTest, LargeSimultaneousRingStepDoesNotDeadlock) {
  HostRanks ranks(3);
  NeverCancel never;
  CreateAll(ranks, never);
  const std::size_t bytes = 16u << 20;  // far beyond any socket buffer
  std::vector<core::Status> st(3);
  std::vector<std::vector<char>> in(3, std::vector<char>(bytes)), out(3, std::vector<char>(bytes));
  for (int r = 0; r < 3; ++r) std::memset(in[r].data(), 'a' + r, bytes);
  RunOnRanks(3, [&](int r) {
    const SendOp s{(r + 1) % 3, in[r].data(), bytes};
    const RecvOp v{(r + 2) % 3, out[r].data(), bytes};
    st[r] = ranks.backends[r]->comm().mesh()->Exchange({&s, 1}, {&v, 1}, 1, 0,
                                                       WaitSpec{DeadlineIn(60), &never, {}});
  });
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(st[r].ok()) << st[r].ToString();
    EXPECT_EQ(out[r], in[(r + 2) % 3]);
  }
}

TEST(HostMeshTest, DeadlineGivesTimeoutNamingTheSilentRank) {
  HostRanks ranks(3);
  NeverCancel never;
  CreateAll(ranks, never);
  std::vector<core::Status> st(3);
  std::vector<double> took(3);
  RunOnRanks(3, [&](int r) {
    if (r == 1) return;  // never calls the collective
    const auto t0 = Clock::now();
    st[r] = AllReduceOnce(*ranks.backends[r], &AllReduceDirect, "direct", 0.5);
    took[r] = Since(t0);
  });
  for (int r : {0, 2}) {
    EXPECT_EQ(st[r].code(), core::StatusCode::kTimeout) << st[r].ToString();
    EXPECT_NE(st[r].message().find("rank " + std::to_string(r) +
                                   ": deadline passed in allReduce direct step 0 while waiting "
                                   "for data from rank 1 (no data from rank 1 for "),
              std::string::npos)
        << st[r].message();
    EXPECT_GE(took[r], 0.5);
    EXPECT_LT(took[r], 3.0);
  }
  // The failed collective broke the mesh: no more work until Recover.
  const core::Status again = AllReduceOnce(*ranks.backends[0], &AllReduceDirect, "direct", 1);
  EXPECT_EQ(again.code(), core::StatusCode::kFailedPrecondition) << again.ToString();
}

TEST(HostMeshTest, ClosedPeerIsPeerLostOnEveryOtherRankQuickly) {
  HostRanks ranks(4);
  NeverCancel never;
  CreateAll(ranks, never);
  ranks.backends[2]->Disconnect();  // as if rank 2 had been killed
  std::vector<core::Status> st(4);
  std::vector<double> took(4);
  RunOnRanks(4, [&](int r) {
    if (r == 2) return;
    const auto t0 = Clock::now();
    // Ring: ranks 0 and 1 do not read from rank 2, yet must notice it is gone.
    st[r] = AllReduceOnce(*ranks.backends[r], &AllReduceRing, "ring", 30);
    took[r] = Since(t0);
  });
  for (int r : {0, 1, 3}) {
    EXPECT_EQ(st[r].code(), core::StatusCode::kPeerLost) << st[r].ToString();
    EXPECT_NE(st[r].message().find("rank 2 disconnected"), std::string::npos) << st[r].message();
    EXPECT_LT(took[r], 5.0) << "rank " << r << " noticed the lost peer only after " << took[r];
  }
}

TEST(HostMeshTest, PeerThatSaidGoodbyeIsNotALossUntilNeeded) {
  HostRanks ranks(3);
  NeverCancel never;
  CreateAll(ranks, never);
  ranks.backends[2].reset();  // clean exit: goodbye frames, then close
  std::vector<core::Status> st(2);
  RunOnRanks(2, [&](int r) {
    const int v = r;
    int got = -1;
    const SendOp s{1 - r, &v, sizeof(v)};
    const RecvOp rv{1 - r, &got, sizeof(got)};
    st[r] = ranks.backends[r]->comm().mesh()->Exchange({&s, 1}, {&rv, 1}, 7, 0,
                                                       WaitSpec{DeadlineIn(10), &never, {}});
    if (st[r].ok() && got != 1 - r) st[r] = core::Internal("wrong value");
  });
  ASSERT_TRUE(st[0].ok()) << st[0].ToString();
  ASSERT_TRUE(st[1].ok()) << st[1].ToString();
  int got = 0;
  const RecvOp from2{2, &got, sizeof(got)};
  const core::Status lost = ranks.backends[0]->comm().mesh()->Exchange(
      {}, {&from2, 1}, 8, 0, WaitSpec{DeadlineIn(10), &never, {"x", "y", 0}});
  EXPECT_EQ(lost.code(), core::StatusCode::kPeerLost) << lost.ToString();
  EXPECT_NE(lost.message().find("rank 2"), std::string::npos) << lost.message();
}

TEST(HostMeshTest, PeerDroppingTheMeshToRecoverIsAbortedNotLost) {
  HostRanks ranks(3);
  NeverCancel never;
  CreateAll(ranks, never);
  ranks.backends[1]->comm().mesh()->CloseForRecovery();
  std::vector<core::Status> st(3);
  RunOnRanks(3, [&](int r) {
    if (r != 1) st[r] = AllReduceOnce(*ranks.backends[r], &AllReduceRing, "ring", 30);
  });
  for (int r : {0, 2}) {
    EXPECT_EQ(st[r].code(), core::StatusCode::kAborted) << st[r].ToString();
    EXPECT_NE(st[r].message().find("rank 1 dropped the mesh of epoch 0"), std::string::npos)
        << st[r].message();
  }
}

TEST(HostMeshTest, PeerDroppingTheMeshMidMessageIsStillAborted) {
  HostRanks ranks(2);
  NeverCancel never;
  CreateAll(ranks, never);
  const std::size_t bytes = 16u << 20;
  std::vector<char> in(bytes, 'x'), out(bytes);
  // Rank 0 gets a few MiB into the socket buffers, then times out: half a message is out.
  const SendOp s{1, in.data(), bytes};
  const core::Status sent = ranks.backends[0]->comm().mesh()->Exchange(
      {&s, 1}, {}, 1, 0, WaitSpec{DeadlineIn(0.3), &never, {}});
  ASSERT_EQ(sent.code(), core::StatusCode::kTimeout) << sent.ToString();
  core::Status got;
  std::thread receiver([&] {
    const RecvOp v{0, out.data(), bytes};
    got = ranks.backends[1]->comm().mesh()->Exchange({}, {&v, 1}, 1, 0,
                                                     WaitSpec{DeadlineIn(10), &never, {}});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ranks.backends[0]->comm().mesh()->CloseForRecovery();
  receiver.join();
  EXPECT_EQ(got.code(), core::StatusCode::kAborted) << got.ToString();
}

TEST(HostMeshTest, CancelledTokenAbortsAWait) {
  HostRanks ranks(2);
  FlagCancel cancel;
  CreateAll(ranks, cancel);
  std::thread tripper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel.Trip();
  });
  const auto t0 = Clock::now();
  const core::Status st = AllReduceOnce(*ranks.backends[0], &AllReduceRing, "ring", 30);
  tripper.join();
  EXPECT_EQ(st.code(), core::StatusCode::kAborted) << st.ToString();
  EXPECT_NE(st.message().find("rank 0: stopped in allReduce ring step 0"), std::string::npos)
      << st.message();
  EXPECT_LT(Since(t0), 5.0);
}

// Connects to `addr` and sends `bytes`; returns true when the server closed the connection
// without answering (what a rejected hello gets).
bool RejectedAfterSending(const PeerAddress& addr, const void* bytes, std::size_t n) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(addr.port));
  inet_pton(AF_INET, addr.host.c_str(), &sa.sin_addr);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) return false;
  timeval tv{5, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (send(fd.get(), bytes, n, MSG_NOSIGNAL) != static_cast<long>(n)) return false;
  char answer[64];
  const long r = recv(fd.get(), answer, sizeof(answer), 0);
  return r == 0 || (r < 0 && errno == ECONNRESET);
}

TEST(HostMeshTest, StrayAndBadHellosAreRejectedAndSetupStillSucceeds) {
  HostRanks ranks(2);
  NeverCancel never;
  UniqueFd silent;  // a stray that connects and says nothing must not block setup
  std::vector<bool> rejected;
  ranks.dirs[0]->after_gather = [&](const std::string&, const std::vector<std::string>& all) {
    const PeerAddress target = ParsePeerAddress(all[1]).value();
    const PeerAddress me = ParsePeerAddress(all[0]).value();
    char garbage[40];
    std::memset(garbage, 0x5a, sizeof(garbage));
    rejected.push_back(RejectedAfterSending(target, garbage, sizeof(garbage)));
    Hello wrong_token{kHelloMagic, kWireVersion, 0, 0, 1, 0, target.nonce + 1, me.nonce};
    rejected.push_back(RejectedAfterSending(target, &wrong_token, sizeof(Hello)));
    Hello old_epoch{kHelloMagic, kWireVersion, 0, 0, 1, 7, target.nonce, me.nonce};
    rejected.push_back(RejectedAfterSending(target, &old_epoch, sizeof(Hello)));
    Hello impostor{kHelloMagic, kWireVersion, 0, 0, 1, 0, target.nonce, me.nonce ^ 1};
    rejected.push_back(RejectedAfterSending(target, &impostor, sizeof(Hello)));
    silent.reset(socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(target.port));
    inet_pton(AF_INET, target.host.c_str(), &sa.sin_addr);
    (void)connect(silent.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
  };
  CreateAll(ranks, never);
  EXPECT_EQ(rejected, std::vector<bool>({true, true, true, true}));
  std::vector<core::Status> st(2);
  RunOnRanks(2, [&](int r) { st[r] = ranks.backends[r]->Barrier(DeadlineIn(10)); });
  EXPECT_TRUE(st[0].ok()) << st[0].ToString();
  EXPECT_TRUE(st[1].ok()) << st[1].ToString();
}

TEST(HostMeshTest, SetupTimesOutWhenARankNeverJoins) {
  HostRanks ranks(3);
  NeverCancel never;
  std::vector<core::Status> st(2);
  const auto t0 = Clock::now();
  RunOnRanks(2, [&](int r) {
    st[r] = HostBackend::Create(r, 3, *ranks.dirs[r], never, {}, DeadlineIn(0.5)).status();
  });
  EXPECT_LT(Since(t0), 3.0);
  for (const auto& s : st) EXPECT_EQ(s.code(), core::StatusCode::kTimeout) << s.ToString();
}

}  // namespace
}  // namespace ccltune::worker::host
