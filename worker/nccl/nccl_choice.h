// One NCCL choice bound to one problem (PreparedChoice, docs/design.md §2): its buffers, its
// communicator, its forced algorithm, eager or CUDA-graph rounds timed by CUDA events, and
// the correctness check against an independently computed expected result. Must be
// destroyed before the backend whose Runtime it borrows.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "core/plan/plan.h"
#include "core/plan/problem.h"
#include "worker/nccl/buffer_set.h"
#include "worker/nccl/choice_catalog.h"
#include "worker/nccl/epilogue_stage.h"
#include "worker/nccl/gpu_names.h"
#include "worker/nccl/runtime.h"
#include "worker/nccl/staged_buffers.h"
#include "worker/rank/backend.h"

namespace ccltune::worker::nccl {

class NcclChoice final : public PreparedChoice {
 public:
  // Collective: allocates, registers and (for forced algorithms) runs one probe op to learn
  // whether NCCL offers the combination; a combination it does not offer is
  // FailedPrecondition("skip: ...").
  static core::Result<std::unique_ptr<PreparedChoice>> Create(Runtime& rt,
                                                              const core::Problem& problem,
                                                              const ChoiceSpec& spec,
                                                              const core::BenchmarkSpec& bench,
                                                              Deadline deadline);

  core::Status Warmup(int iters, Deadline deadline) override;
  core::Status ReadyRounds(int iters, Deadline deadline) override;
  // Each round: [gate] → device barrier → start event → iters ops (or one graph replay) →
  // end event, then the gate opens. The gate keeps the host's per-call launch latency out of
  // the time; the device barrier keeps rank skew out of it.
  core::Result<double> TimedRound(int iters, Deadline deadline) override;
  // Eager only: [gate] → `iters` ops issued (NCCL's parts on the blocking twin of the choice's
  // communicator, Runtime::BlockingCommFor) and timed on the host → the gate opens, the ops run.
  core::Result<std::optional<double>> HostRound(int iters, Deadline deadline) override;
  core::Status Verify(Deadline deadline) override;

 private:
  NcclChoice(Runtime& rt, const ChoiceSpec& spec, const core::BenchmarkSpec& bench)
      : rt_(rt), spec_(spec), bench_(bench) {}

  // The buffers the program gives and reads: a staged choice's own (its kernel's stay in
  // peer memory), else the kernel's.
  const BufferSet& io() const { return staged_ ? staged_->app() : *buffers_; }
  core::Status FillInputs(Deadline deadline);
  // Peer choices: buffers in peer memory, the ranks' signals cleared and the ranks met.
  core::Status PreparePeers(const core::Problem& problem, const BufferLayout& layout,
                            Deadline deadline);
  // hier: buffers in the node's peer memory, the communicator across the nodes.
  core::Status PrepareHier(const BufferLayout& layout, Deadline deadline);
  // Clears the team's signals on every rank and meets them before the first kernel.
  core::Status ResetTeam(PeerMemory& team, Deadline deadline);
  core::Status EnqueuePeer(int slice);
  // hier's three phases; waits for the NCCL phase to leave ncclInProgress.
  core::Status EnqueueHier(int slice, Deadline deadline);
  // A bounded spin (test-hang, test-absent) or a peer kernel's bounded wait ran out.
  core::Status BoundedWaitsTimedOut() const;
  core::Status ProbeForcedAlgo(Deadline deadline);
  // One op on slice `slice`: the forced scope, the enqueue(s), the wait for ncclInProgress.
  core::Status EnqueueOne(int slice, Deadline deadline);
  core::Status EnqueueParts(int slice, Deadline deadline);
  core::Status EnqueueMany(int n, Deadline deadline);
  // The collective of one op (NCCL, composed or peer kernel), without the epilogue.
  core::Status EnqueueCollective(int slice, Deadline deadline);
  // One comparison on the GPU (host-mapped result), waited for.
  core::Status Compare(const void* got, const void* want, std::uint64_t count, const char* what,
                       Deadline deadline);
  core::Status VerifyEpilogue(Deadline deadline);
  core::Status Capture(int iters, Deadline deadline);
  // One gated round of `iters` launches (at most kMaxGatedIters, or one graph replay).
  core::Result<double> GatedRound(int iters, Deadline deadline);
  core::Result<double> RunRound(int iters, bool gated, Deadline deadline);
  core::Result<double> ElapsedPerOp(int iters, Deadline deadline);
  // The first op on the blocking twin (NCCL's parts of one op, no epilogue), under
  // gpu::RunBounded: it may connect peers.
  core::Status ConnectTwin(Deadline deadline);

  static constexpr int kMaxGatedIters = 64;
  static constexpr double kGateBoundSeconds = 2;

  Runtime& rt_;
  ChoiceSpec spec_;
  core::BenchmarkSpec bench_;
  OpShape shape_;
  std::shared_ptr<Communicator> comm_;
  std::shared_ptr<Communicator> twin_;  // comm_'s blocking twin, once a host round needs it
  std::unique_ptr<BufferSet> buffers_;
  std::unique_ptr<StagedBuffers> staged_;  // staged=1 only
  Event start_;
  Event end_;
  GraphExec graph_;
  int graph_iters_ = 0;
  std::uint64_t next_slice_ = 0;
  std::uint64_t generation_ = 0;
  bool hang_here_ = false;
  bool absent_spun_ = false;
  std::optional<PeerEnqueuer> peer_;
  std::optional<HierAllReduce> hier_;
  std::shared_ptr<Communicator> across_;     // hier's NCCL phase
  PeerMemory* team_ = nullptr;               // the peer memory our kernels run on, if any
  std::unique_ptr<EpilogueStage> epilogue_;  // problems with an epilogue only
  std::uint64_t peer_timeout_ns_ = 0;
};

}  // namespace ccltune::worker::nccl
