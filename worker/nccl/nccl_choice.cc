// Preparation, timed rounds and verification of one NCCL choice (nccl_choice.h).
#include "worker/nccl/nccl_choice.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>

#include "core/gpu/bounded_call.h"
#include "core/kernels/kernels.h"
#include "worker/nccl/gpu_names.h"

namespace ccltune::worker::nccl {
namespace {

int HangRank(int world) {
  const char* env = std::getenv("CCLTUNE_TEST_HANG_RANK");
  const int r = env ? std::atoi(env) : 1;
  return r < world ? r : world - 1;
}

core::Status MismatchError(const kernels::Mismatch& m, const char* what, int rank) {
  return core::FailedPrecondition(std::string("wrong: ") + what + "element " +
                                  std::to_string(m.index) + " got " + std::to_string(m.got) +
                                  " want " + std::to_string(m.want) + " (rank " +
                                  std::to_string(rank) + ")");
}

// Puts `with` into `slot` for the scope, then what was there back.
class CommSwap {
 public:
  CommSwap(std::shared_ptr<Communicator>& slot, std::shared_ptr<Communicator> with)
      : slot_(slot), saved_(std::exchange(slot, std::move(with))) {}
  ~CommSwap() { slot_ = std::move(saved_); }
  CommSwap(const CommSwap&) = delete;
  CommSwap& operator=(const CommSwap&) = delete;

 private:
  std::shared_ptr<Communicator>& slot_;
  std::shared_ptr<Communicator> saved_;
};

// Opens the runtime's gate when the scope ends, if it was given one: a gate left shut holds
// the stream until its bound.
class GateRelease {
 public:
  explicit GateRelease(Runtime* rt) : rt_(rt) {}
  ~GateRelease() {
    if (rt_ != nullptr) rt_->ReleaseGate();
  }
  GateRelease(const GateRelease&) = delete;
  GateRelease& operator=(const GateRelease&) = delete;

 private:
  Runtime* rt_;
};

const char* AlgoName(int a) { return a == kCcltuneAlgoTree ? "tree" : "ring"; }
const char* ProtoName(int p) {
  return p == kCcltuneProtoLL ? "ll" : p == kCcltuneProtoLL128 ? "ll128" : "simple";
}

}  // namespace

core::Result<std::unique_ptr<PreparedChoice>> NcclChoice::Create(Runtime& rt,
                                                                 const core::Problem& problem,
                                                                 const ChoiceSpec& spec,
                                                                 const core::BenchmarkSpec& bench,
                                                                 Deadline deadline) {
  if (!spec.unsupported.empty()) return core::FailedPrecondition("skip: " + spec.unsupported);
  if (spec.algo >= 0 && rt.tuner() == nullptr) {
    return core::FailedPrecondition("skip: in-process tuner not loaded");
  }
  std::unique_ptr<NcclChoice> c(new NcclChoice(rt, spec, bench));
  c->shape_ = {
      problem.op,    problem.dtype,
      problem.redop, core::ElementCount(problem.op, problem.dtype, problem.bytes, rt.world()),
      rt.world(),    rt.rank()};
  if (c->shape_.count == 0)
    return core::FailedPrecondition("skip: message smaller than one element per rank");
  if (spec.fused && problem.epilogue.none()) {
    return core::FailedPrecondition("skip: fused kernels need a problem with an epilogue");
  }
  c->hang_here_ = (spec.compose == Composition::kBoundedSpin || spec.absent_test) &&
                  rt.rank() == HangRank(rt.world());
  const std::size_t esize = core::DtypeSize(problem.dtype);
  const BufferLayout layout =
      PlanLayout(kernels::SendElements(problem.op, c->shape_.count, rt.world()) * esize,
                 kernels::RecvElements(problem.op, c->shape_.count, rt.world()) * esize,
                 rt.rotate_buffers() ? rt.l2_bytes() : 0);
  CCLTUNE_ASSIGN_OR_RETURN(c->comm_, rt.CommFor(spec, deadline));
  if (spec.compose == Composition::kPeer) {
    CCLTUNE_RETURN_IF_ERROR(c->PreparePeers(problem, layout, deadline));
  } else if (spec.compose == Composition::kHierarchical) {
    CCLTUNE_RETURN_IF_ERROR(c->PrepareHier(layout, deadline));
  } else {
    CCLTUNE_ASSIGN_OR_RETURN(
        c->buffers_, BufferSet::Create(layout, spec.buffers, c->comm_, deadline, rt.cancel()));
  }
  if (!problem.epilogue.none()) {
    CCLTUNE_ASSIGN_OR_RETURN(c->epilogue_, EpilogueStage::Create(problem, spec, layout));
  }
  CCLTUNE_ASSIGN_OR_RETURN(c->start_, Event::Create());
  CCLTUNE_ASSIGN_OR_RETURN(c->end_, Event::Create());
  CCLTUNE_RETURN_IF_ERROR(c->FillInputs(deadline));
  if (spec.algo >= 0) CCLTUNE_RETURN_IF_ERROR(c->ProbeForcedAlgo(deadline));
  return std::unique_ptr<PreparedChoice>(std::move(c));
}

core::Status NcclChoice::PreparePeers(const core::Problem& problem, const BufferLayout& layout,
                                      Deadline deadline) {
  PeerMemory& peers = *rt_.peers();
  const std::uint64_t staging =
      spec_.fused ? EpilogueStage::PeerStagingBytes(spec_, problem, layout, shape_.world)
                  : kernels::StagingBytes(PeerAlgoFor(spec_, problem.op), PeerShapeOf(spec_),
                                          shape_.count, shape_.dtype, shape_.world);
  CCLTUNE_ASSIGN_OR_RETURN(buffers_, BufferSet::CreateOnPeers(layout, staging, peers, deadline));
  if (spec_.staged) {
    CCLTUNE_ASSIGN_OR_RETURN(staged_,
                             StagedBuffers::Create(layout, apply::StagedCopiesOf(spec_, problem.op),
                                                   peers.rank(), rt_.stream()));
  }
  // LL flags left by an earlier choice could equal this one's epochs: staging starts zeroed.
  if (staging > 0) {
    CCLTUNE_CUDA_TRY(cudaMemsetAsync(buffers_->staging(), 0, staging, rt_.stream()));
  }
  CCLTUNE_ASSIGN_OR_RETURN(PeerEnqueuer e, PeerEnqueuer::Create(spec_, shape_));
  peer_.emplace(std::move(e));
  return ResetTeam(peers, deadline);
}

core::Status NcclChoice::PrepareHier(const BufferLayout& layout, Deadline deadline) {
  PeerMemory* node = rt_.node_peers();
  if (node == nullptr || !node->usable()) {
    return core::FailedPrecondition("skip: peer memory unavailable inside the node: " +
                                    (node == nullptr ? "no node team" : node->problem()));
  }
  CCLTUNE_ASSIGN_OR_RETURN(across_, rt_.AcrossNodes(deadline));
  CCLTUNE_ASSIGN_OR_RETURN(HierAllReduce h,
                           HierAllReduce::Create(spec_, shape_.count, shape_.dtype, shape_.redop,
                                                 node->rank(), node->world()));
  hier_.emplace(h);
  // Pull mode throughout: no staging; each rank's output holds its shard between the phases.
  CCLTUNE_ASSIGN_OR_RETURN(buffers_, BufferSet::CreateOnPeers(layout, 0, *node, deadline));
  return ResetTeam(*node, deadline);
}

core::Status NcclChoice::ResetTeam(PeerMemory& team, Deadline deadline) {
  team_ = &team;
  // The kernels give up well before the host's deadline, so their timeout is what shows.
  peer_timeout_ns_ = static_cast<std::uint64_t>(bench_.choice_timeout_seconds * 0.5e9);
  // A timed-out kernel anywhere leaves the epochs out of step: every choice starts from
  // cleared signals, and no rank's first kernel runs before every rank cleared its own.
  CCLTUNE_RETURN_IF_ERROR(team.Reset(rt_.stream()));
  CCLTUNE_RETURN_IF_ERROR(rt_.EnqueueDeviceBarrier(deadline));
  return rt_.WaitGpu(nullptr, deadline, "peer signal reset");
}

core::Status NcclChoice::EnqueueHier(int slice, Deadline deadline) {
  const kernels::PeerTeam node = team_->Team(peer_timeout_ns_);
  const kernels::PeerOperands ops = buffers_->Operands(slice);
  for (int phase = 0; phase < HierAllReduce::kPhases; ++phase) {
    CCLTUNE_RETURN_IF_ERROR(hier_->Enqueue(phase, node, ops, across_->get(), rt_.stream()));
    if (phase == 1) CCLTUNE_RETURN_IF_ERROR(rt_.WaitEnqueued(*across_, deadline, "hier enqueue"));
  }
  return core::Status::Ok();
}

core::Status NcclChoice::EnqueuePeer(int slice) {
  const kernels::PeerTeam team = team_->Team(peer_timeout_ns_);
  if (spec_.fused) return epilogue_->Fused(*buffers_, slice, team, rt_.stream());
  const auto kernel = [&](const kernels::PeerOperands& ops) {
    return peer_->Enqueue(team, ops, rt_.stream());
  };
  // Staged: the copies in and out are part of the op, timed and captured with the kernel.
  if (staged_) return staged_->Enqueue(*buffers_, slice, rt_.stream(), kernel);
  return kernel(buffers_->Operands(slice));
}

core::Status NcclChoice::BoundedWaitsTimedOut() const {
  if (hang_here_ && rt_.spin_flags_host()[1] != 0) {
    return core::TimeoutError(spec_.absent_test
                                  ? "test-absent: this rank stayed away from the peer kernel"
                                  : "test-hang: bounded spin ran out its time bound");
  }
  if (team_ == nullptr || !team_->TimedOut()) return core::Status::Ok();
  return core::TimeoutError("peer kernel: a peer rank did not arrive within " +
                            std::to_string(peer_timeout_ns_ / 1000000) +
                            " ms (bounded wait in the kernel)");
}

// Every slice gets this rank's generation-0 data (slice 0 filled, then copied onto the
// others); Verify later uses fresh generations. A staged choice's kernel gets its input
// only through the copy in, as in a program.
core::Status NcclChoice::FillInputs(Deadline deadline) {
  const BufferSet& bufs = io();
  const BufferLayout& l = bufs.layout();
  const std::uint64_t elems = l.send_bytes / core::DtypeSize(shape_.dtype);
  CCLTUNE_CUDA_TRY(kernels::LaunchRandomFill(bufs.send(0), elems, shape_.dtype, shape_.rank,
                                             /*generation=*/0, 0, rt_.stream()));
  CCLTUNE_RETURN_IF_ERROR(CopySliceZeroToAll(bufs.send(0), l.send_stride, l.slices, rt_.stream()));
  if (epilogue_) CCLTUNE_RETURN_IF_ERROR(epilogue_->Fill(bufs, 0, l.slices, rt_.stream()));
  return rt_.WaitGpu(nullptr, deadline, "fill inputs");
}

core::Status NcclChoice::ProbeForcedAlgo(Deadline deadline) {
  const CcltuneTunerStats before = rt_.tuner()->Stats();
  CCLTUNE_RETURN_IF_ERROR(EnqueueOne(0, deadline));
  CCLTUNE_RETURN_IF_ERROR(rt_.WaitGpu(nullptr, deadline, "forced-algo probe"));
  const CcltuneTunerStats after = rt_.tuner()->Stats();
  const std::string combo = std::string(AlgoName(spec_.algo)) + "/" + ProtoName(spec_.proto);
  if (after.unavailable > before.unavailable) {
    return core::FailedPrecondition("skip: NCCL does not offer " + combo + " for " +
                                    core::OpName(shape_.op) + " here (cost-table entry < 0)");
  }
  if (after.forced == before.forced) {
    return core::FailedPrecondition("skip: NCCL did not consult the in-process tuner for " + combo +
                                    " (NCCL_TUNER_PLUGIN overridden?)");
  }
  return core::Status::Ok();
}

core::Status NcclChoice::EnqueueOne(int slice, Deadline deadline) {
  if (hang_here_ && spec_.absent_test && absent_spun_) return core::Status::Ok();
  if (hang_here_) {
    absent_spun_ = spec_.absent_test;  // the absent rank waits once, then launches nothing
    rt_.spin_flags_host()[1] = 0;
    // Stands in for a rank whose collective never starts: every peer's NCCL call (or
    // peer kernel, for test-absent, which then times out on its own bound) waits.
    const double bound_s =
        spec_.absent_test ? peer_timeout_ns_ * 1e-9 : bench_.choice_timeout_seconds + 30;
    CCLTUNE_CUDA_TRY(kernels::LaunchBoundedSpin(rt_.spin_flags_device(),
                                                static_cast<std::uint64_t>(bound_s * 1e9),
                                                rt_.spin_flags_device() + 1, rt_.stream()));
    return core::Status::Ok();
  }
  CCLTUNE_RETURN_IF_ERROR(EnqueueCollective(slice, deadline));
  // Unfused: the separate kernel frameworks run today, on the all-reduce's output.
  if (epilogue_ && !spec_.fused) return epilogue_->After(io(), slice, rt_.stream());
  return core::Status::Ok();
}

core::Status NcclChoice::EnqueueCollective(int slice, Deadline deadline) {
  if (peer_) return EnqueuePeer(slice);
  if (hier_) return EnqueueHier(slice, deadline);
  const int coll = TunerColl(shape_.op);
  ForcedScope forced(spec_.algo >= 0 && coll >= 0 ? rt_.tuner() : nullptr, coll, spec_.algo,
                     spec_.proto, /*channels=*/0);
  return EnqueueParts(slice, deadline);
}

core::Status NcclChoice::EnqueueParts(int slice, Deadline deadline) {
  const void* send = buffers_->send(slice);
  void* recv = buffers_->recv(slice);
  if (spec_.compose == Composition::kReduceScatterAllGather) {
    for (int part = 0; part < 2; ++part) {
      CCLTUNE_RETURN_IF_ERROR(
          EnqueueRsAgPart(part, shape_, send, recv, comm_->get(), rt_.stream()));
      CCLTUNE_RETURN_IF_ERROR(rt_.WaitEnqueued(*comm_, deadline, "rs+ag enqueue"));
    }
    return core::Status::Ok();
  }
  CCLTUNE_RETURN_IF_ERROR(EnqueueDirect(shape_, send, recv, comm_->get(), rt_.stream()));
  return rt_.WaitEnqueued(*comm_, deadline, "enqueue");
}

core::Status NcclChoice::EnqueueMany(int n, Deadline deadline) {
  const int slices = buffers_->layout().slices;
  for (int i = 0; i < n; ++i) {
    CCLTUNE_RETURN_IF_ERROR(EnqueueOne(static_cast<int>(next_slice_++ % slices), deadline));
  }
  return core::Status::Ok();
}

core::Status NcclChoice::Warmup(int iters, Deadline deadline) {
  CCLTUNE_RETURN_IF_ERROR(EnqueueMany(iters, deadline));
  CCLTUNE_RETURN_IF_ERROR(rt_.WaitGpu(nullptr, deadline, "warmup"));
  return BoundedWaitsTimedOut();
}

core::Status NcclChoice::ReadyRounds(int iters, Deadline deadline) {
  if (!bench_.cuda_graph || (graph_ && graph_iters_ == iters)) return core::Status::Ok();
  // Capture now and replay once, so the first timed round does not pay the graph upload.
  CCLTUNE_RETURN_IF_ERROR(Capture(iters, deadline));
  CCLTUNE_CUDA_TRY(cudaGraphLaunch(graph_.get(), rt_.stream()));
  CCLTUNE_RETURN_IF_ERROR(rt_.WaitGpu(nullptr, deadline, "graph warmup"));
  return BoundedWaitsTimedOut();
}

core::Status NcclChoice::Capture(int iters, Deadline deadline) {
  graph_ = GraphExec();
  // Relaxed: NCCL's non-blocking group thread enqueues into the capturing stream.
  CCLTUNE_CUDA_TRY(cudaStreamBeginCapture(rt_.stream(), cudaStreamCaptureModeRelaxed));
  const core::Status enq = EnqueueMany(iters, deadline);
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(rt_.stream(), &graph);
  if (!enq.ok()) {
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    return enq.WithContext("graph capture");
  }
  CCLTUNE_CUDA_TRY(end);
  cudaGraphExec_t exec = nullptr;
  const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  CCLTUNE_CUDA_TRY(inst);
  graph_ = GraphExec(exec);
  graph_iters_ = iters;
  return core::Status::Ok();
}

core::Result<double> NcclChoice::TimedRound(int iters, Deadline deadline) {
  if (iters <= 0) return core::InvalidArgument("iters must be > 0");
  if (bench_.cuda_graph) {
    if (!graph_ || graph_iters_ != iters) CCLTUNE_RETURN_IF_ERROR(Capture(iters, deadline));
    return GatedRound(iters, deadline);
  }
  // Every launch of a round is queued behind the gate before the GPU runs any: on a
  // non-blocking communicator each NCCL call starts a thread (tens of µs), so launches made
  // while the GPU runs would time the host. A gate holds only as many launches as surely fit
  // the stream's and NCCL's queues (a launch blocked on a full queue behind it would stall
  // until its bound), so a longer round is timed as gated chunks whose times add up.
  double seconds = 0;
  for (int done = 0; done < iters;) {
    const int chunk = std::min(kMaxGatedIters, iters - done);
    CCLTUNE_ASSIGN_OR_RETURN(const double per_op, GatedRound(chunk, deadline));
    seconds += per_op * chunk;
    done += chunk;
  }
  return seconds / iters;
}

core::Result<std::optional<double>> NcclChoice::HostRound(int iters, Deadline deadline) {
  // A graph replay costs the host one launch whatever it holds; hier's and the test
  // choices' calls are no program's.
  const bool test_choice = spec_.compose == Composition::kBoundedSpin || spec_.absent_test;
  if (bench_.cuda_graph || hier_ || test_choice || iters <= 0) return std::optional<double>();
  std::optional<CommSwap> on_twin;
  if (!peer_) {  // NCCL's parts: on the blocking twin, connected first
    const bool first = twin_ == nullptr;
    if (first) {
      CCLTUNE_ASSIGN_OR_RETURN(twin_, rt_.BlockingCommFor(spec_, deadline));
    }
    on_twin.emplace(comm_, twin_);
    if (first) CCLTUNE_RETURN_IF_ERROR(ConnectTwin(deadline));
  }
  const int n = std::min(iters, kMaxGatedIters);
  GateRelease release(&rt_);
  CCLTUNE_RETURN_IF_ERROR(rt_.LaunchGate(kGateBoundSeconds));
  const auto t0 = Clock::now();
  CCLTUNE_RETURN_IF_ERROR(EnqueueMany(n, deadline));
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count() / n;
  rt_.ReleaseGate();
  CCLTUNE_RETURN_IF_ERROR(rt_.WaitGpu(nullptr, deadline, "host round"));
  CCLTUNE_RETURN_IF_ERROR(BoundedWaitsTimedOut());
  return std::optional<double>(seconds);
}

// The helper thread gets values only, never this choice: when a peer never joins it stays in
// NCCL past the choice's end (RunBounded abandons it), and the choice's buffers are freed.
core::Status NcclChoice::ConnectTwin(Deadline deadline) {
  const int coll = TunerColl(shape_.op);
  const TunerControl* tuner = spec_.algo >= 0 && coll >= 0 ? rt_.tuner() : nullptr;
  const auto first_call = [tuner, coll, algo = spec_.algo, proto = spec_.proto,
                           rs_ag = spec_.compose == Composition::kReduceScatterAllGather,
                           shape = shape_, send = buffers_->send(0), recv = buffers_->recv(0),
                           comm = twin_->get(), stream = rt_.stream()]() -> core::Status {
    ForcedScope forced(tuner, coll, algo, proto, /*channels=*/0);
    if (!rs_ag) return EnqueueDirect(shape, send, recv, comm, stream);
    for (int part : {0, 1})
      CCLTUNE_RETURN_IF_ERROR(EnqueueRsAgPart(part, shape, send, recv, comm, stream));
    return core::Status::Ok();
  };
  bool abandoned = false;
  const core::Status st = gpu::RunBounded(first_call, deadline, &abandoned);
  if (abandoned) {
    rt_.AbandonBlockingComms();
    return core::PeerLost(
        "eager host round: a peer did not join the first call on the blocking communicator "
        "within the choice's timeout");
  }
  CCLTUNE_RETURN_IF_ERROR(st.WithContext("eager host round, first call"));
  return rt_.WaitGpu(nullptr, deadline, "eager host round, first call");
}

core::Result<double> NcclChoice::GatedRound(int iters, Deadline deadline) {
  core::Result<double> t = RunRound(iters, /*gated=*/true, deadline);
  if (t.ok() && rt_.GateTimedOut()) {
    // The host could not queue the round within the gate's bound: measure it ungated.
    t = RunRound(iters, /*gated=*/false, deadline);
  }
  return t;
}

core::Result<double> NcclChoice::RunRound(int iters, bool gated, Deadline deadline) {
  GateRelease release(gated ? &rt_ : nullptr);
  if (gated) CCLTUNE_RETURN_IF_ERROR(rt_.LaunchGate(kGateBoundSeconds));
  CCLTUNE_RETURN_IF_ERROR(rt_.EnqueueDeviceBarrier(deadline));
  CCLTUNE_CUDA_TRY(cudaEventRecord(start_.get(), rt_.stream()));
  if (bench_.cuda_graph) {
    CCLTUNE_CUDA_TRY(cudaGraphLaunch(graph_.get(), rt_.stream()));
  } else {
    CCLTUNE_RETURN_IF_ERROR(EnqueueMany(iters, deadline));
  }
  CCLTUNE_CUDA_TRY(cudaEventRecord(end_.get(), rt_.stream()));
  if (gated) rt_.ReleaseGate();
  return ElapsedPerOp(iters, deadline);
}

core::Result<double> NcclChoice::ElapsedPerOp(int iters, Deadline deadline) {
  CCLTUNE_RETURN_IF_ERROR(rt_.WaitGpu(end_.get(), deadline, "timed round"));
  CCLTUNE_RETURN_IF_ERROR(BoundedWaitsTimedOut());
  float ms = 0;
  CCLTUNE_CUDA_TRY(cudaEventElapsedTime(&ms, start_.get(), end_.get()));
  return static_cast<double>(ms) * 1e-3 / iters;
}

// The program's buffers (io()) are filled and checked: a staged choice whose result never
// reached its caller's output finds NaN there.
core::Status NcclChoice::Verify(Deadline deadline) {
  ++generation_;
  const BufferSet& bufs = io();
  const BufferLayout& l = bufs.layout();
  const std::size_t esize = core::DtypeSize(shape_.dtype);
  CCLTUNE_CUDA_TRY(kernels::LaunchRandomFill(bufs.send(0), l.send_bytes / esize, shape_.dtype,
                                             shape_.rank, generation_, 0, rt_.stream()));
  // NaN (floats) or -1 (integers): stale results cannot pass.
  CCLTUNE_CUDA_TRY(cudaMemsetAsync(bufs.recv(0), 0xff, l.recv_bytes, rt_.stream()));
  if (epilogue_) CCLTUNE_RETURN_IF_ERROR(epilogue_->Fill(bufs, generation_, 1, rt_.stream()));
  CCLTUNE_RETURN_IF_ERROR(EnqueueOne(0, deadline));
  if (epilogue_) return VerifyEpilogue(deadline);
  CCLTUNE_ASSIGN_OR_RETURN(DeviceBuffer want,
                           DeviceBuffer::Allocate(l.recv_bytes, MemoryKind::kCuda));
  CCLTUNE_CUDA_TRY(kernels::LaunchExpected(want.data(), shape_.op, shape_.redop, shape_.dtype,
                                           shape_.count, shape_.world, shape_.rank, generation_,
                                           rt_.stream()));
  return Compare(bufs.recv(0), want.data(), l.recv_bytes / esize, "", deadline);
}

// Both outputs of the epilogue against the fp32 reference of the same generation.
core::Status NcclChoice::VerifyEpilogue(Deadline deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(MappedHost slots, MappedHost::Allocate(2 * sizeof(kernels::Mismatch)));
  auto* host = static_cast<kernels::Mismatch*>(slots.host());
  auto* device = static_cast<kernels::Mismatch*>(slots.device());
  host[1].index = ~0ull;
  CCLTUNE_RETURN_IF_ERROR(
      epilogue_->EnqueueCheck(io(), generation_, shape_.world, device, device + 1, rt_.stream()));
  CCLTUNE_RETURN_IF_ERROR(rt_.WaitGpu(nullptr, deadline, "verify"));
  CCLTUNE_RETURN_IF_ERROR(BoundedWaitsTimedOut());
  const char* what[2] = {"output ", "residual "};
  for (int i = 0; i < 2; ++i) {
    if (host[i].index != ~0ull) return MismatchError(host[i], what[i], shape_.rank);
  }
  return core::Status::Ok();
}

core::Status NcclChoice::Compare(const void* got, const void* want, std::uint64_t count,
                                 const char* what, Deadline deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(MappedHost slot, MappedHost::Allocate(sizeof(kernels::Mismatch)));
  auto* mismatch = static_cast<kernels::Mismatch*>(slot.host());
  CCLTUNE_CUDA_TRY(
      kernels::LaunchCompare(got, want, count, shape_.dtype, core::VerifyTolerance(shape_.dtype),
                             static_cast<kernels::Mismatch*>(slot.device()), rt_.stream()));
  CCLTUNE_RETURN_IF_ERROR(rt_.WaitGpu(nullptr, deadline, "verify"));
  CCLTUNE_RETURN_IF_ERROR(BoundedWaitsTimedOut());
  if (mismatch->index == ~0ull) return core::Status::Ok();
  return MismatchError(*mismatch, what, shape_.rank);
}

}  // namespace ccltune::worker::nccl
