// RuntimeComm's per-call dispatch and its peer memory (runtime_comm.h): the table's choice
// for the call's buffers and size, checked against the exact call, then NCCL (the
// application's communicator or a ctas one), rs+ag, or our kernels. Where a launch's staging
// lives, and why push and pull launches differ there: staging_plan.h. A launch that no
// longer fits runs its size's runner-up where that fits, else NCCL (one log line).
#include <cstdio>

#include "core/gpu/cuda_check.h"
#include "core/gpu/nccl_api.h"
#include "core/kernels/peer_kernels.h"
#include "runtime/runtime_comm.h"
#include "runtime/waits.h"

namespace ccltune::runtime {
namespace {

constexpr std::size_t kMaxEnqueuers = 256;

bool InPlace(const Call& c, std::size_t esize, int rank) {
  const auto* send = static_cast<const char*>(c.send);
  const auto* recv = static_cast<const char*>(c.recv);
  const std::uint64_t mine = c.count * esize * static_cast<std::uint64_t>(rank);
  if (c.op == core::Op::kAllGather) return send == recv + mine;
  if (c.op == core::Op::kReduceScatter) return recv == send + mine;
  return send == recv;
}

core::Status EnqueueCopy(const PeerCopy& c, cudaStream_t stream) {
  if (c.bytes > 0)
    CCLTUNE_CUDA_TRY(cudaMemcpyAsync(c.to, c.from, c.bytes, cudaMemcpyDeviceToDevice, stream));
  return core::Status::Ok();
}

std::string Signature(const AppliedRun& run, const Call& c) {
  return run.name + "|" + core::OpName(c.op) + "|" + core::DtypeName(*c.dtype) + "|" +
         core::RedOpName(*c.redop) + "|" + std::to_string(c.count);
}

}  // namespace

core::Status RuntimeComm::Run(const Call& call) {
  CCLTUNE_ASSIGN_OR_RETURN(const Served served, Serve(call));
  if (served.ran) return core::Status::Ok();
  return RunNccl(call, nccl_);
}

core::Result<RuntimeComm::Served> RuntimeComm::Serve(const Call& call) {
  CCLTUNE_RETURN_IF_ERROR(AsyncError());
  DeviceGuard guard(device_);
  std::lock_guard<std::mutex> lock(mu_);
  Chosen c = Choose(call);
  if (c.run == nullptr) {
    if (timing_) timing_->Forwarded(c.why);
    return Served{false, c.why};
  }
  if (c.run->name == "nccl") {
    if (timing_) timing_->Forwarded("winner is NCCL's own");  // as libccltune-nccl names it
    return Served{false, c.run->reason.empty() ? c.run->name : c.run->reason};
  }
  if (InTrial(call, c)) return ServeTrial(call, c);
  return ServeChosen(call, c);
}

core::Result<RuntimeComm::Served> RuntimeComm::ServeChosen(const Call& call, const Chosen& c) {
  CCLTUNE_ASSIGN_OR_RETURN(bool enqueued,
                           RunChoice(call, *c.run, c.cls, c.send_off, c.recv_off, c.direct));
  const AppliedRun* ran = c.run;
  // No staging left for the choice (alike on every rank: partitions go in call order): the
  // size's runner-up where this call runs one (it too beat NCCL's own in the tune).
  if (!enqueued && c.next != nullptr && c.next != c.run) {
    CCLTUNE_ASSIGN_OR_RETURN(enqueued,
                             RunChoice(call, *c.next, c.cls, c.send_off, c.recv_off, false));
    ran = c.next;
  }
  if (!enqueued) {
    if (timing_) timing_->Forwarded(kStagingFull);
    return Served{false, kStagingFull};  // nothing was enqueued: the caller runs NCCL
  }
  return Served{true, ran->name};
}

std::string_view RuntimeComm::OwnKernelFor(const Call& call) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Chosen c = Choose(call);
  if (c.run == nullptr || c.run->spec.compose != apply::Composition::kPeer) return {};
  return c.run->name;
}

bool RuntimeComm::GroupBuffersChangeChoice(const Call& call) const {
  static const void* const kAny[kernels::kMaxPeers] = {};
  static void* const kAnyOut[kernels::kMaxPeers] = {};
  Call grouped = call;
  grouped.peer_send = kAny;  // only their presence matters to Choose
  grouped.peer_recv = kAnyOut;
  std::lock_guard<std::mutex> lock(mu_);
  if (!GroupBuffers(grouped)) return false;
  return Choose(grouped).run != Choose(call).run;
}

// The table's choice for this exact call, or none (with the reason). Under mu_.
RuntimeComm::Chosen RuntimeComm::Choose(const Call& call) const {
  Chosen c;
  if (!call.dtype || !call.redop) return c.Not("type or op not tuned");
  if (call.count == 0) return c.Not("empty");
  const std::size_t esize = core::DtypeSize(*call.dtype);
  const std::uint64_t bytes = RecordBytes(call, world_);
  // One lookup serves every run below: the buffer class's, direct mode's, plain buffers'.
  const TableEntry* entry = table_.Lookup(call.op, *call.dtype, *call.redop, bytes);
  if (entry == nullptr) return c.Not(kNoRecords);
  c.cls = GroupBuffers(call)
              ? BufferClass::kPooled
              : ClassOf(call, SendElems(call.op, call.count, world_) * esize,
                        RecvElems(call.op, call.count, world_) * esize, &c.send_off, &c.recv_off);
  const CallShape shape_of_call{call.op,
                                *call.dtype,
                                call.count,
                                world_,
                                InPlace(call, esize, rank_),
                                config_.hold_in_place,
                                caps_.span.ranks_per_node,
                                HierScratch()};
  c.run = &entry->For(c.cls);
  // Captured on the program's own buffers (multi-process, direct mode on every rank): the
  // entry's direct run where direct mode runs this call, else plain buffers' run where it does
  // (a staged pull; dispatch_staged.cc). Decided by what every rank shares (the call, the
  // table, direct mode), never by one rank's registrations.
  if (c.cls == BufferClass::kPlain && DirectCapture(call)) {
    if (const AppliedRun* run = FirstDirectable(call, shape_of_call, {&entry->direct, c.run})) {
      c.run = run;
      c.direct = true;
      return c;
    }
  }
  // What the exact call rules out (one-shot pull in place, say) gives way to the plain
  // buffers' choice, which needs nothing shared, then to NCCL.
  if (!WhyNotForCall(c.run->spec, shape_of_call, c.cls).empty() && c.cls == BufferClass::kPooled) {
    c.run = &entry->plain;
  }
  if (!WhyNotForCall(c.run->spec, shape_of_call, c.cls).empty()) {
    return c.Not("the tuned choice cannot run this call (in place, say)");
  }
  if (c.run == &entry->plain && entry->plain_next.name != "nccl" &&
      WhyNotForCall(entry->plain_next.spec, shape_of_call, c.cls).empty()) {
    c.next = &entry->plain_next;
  }
  return c;
}

core::Result<bool> RuntimeComm::RunChoice(const Call& call, const AppliedRun& run, BufferClass cls,
                                          std::size_t send_off, std::size_t recv_off, bool direct) {
  const gpu::OpShape shape{call.op, *call.dtype, *call.redop, call.count, world_, rank_};
  switch (run.spec.compose) {
    case apply::Composition::kPeer:
      return RunPeer(call, run, shape, cls, send_off, recv_off, direct);
    case apply::Composition::kReduceScatterAllGather:
      CCLTUNE_RETURN_IF_ERROR(RunRsAg(call, shape));
      return true;
    case apply::Composition::kHierarchical:
      CCLTUNE_RETURN_IF_ERROR(RunHier(call, run));
      return true;
    default:
      break;
  }
  auto ctas = ctas_comms_.find(run.spec.ctas);
  CCLTUNE_RETURN_IF_ERROR(
      RunNccl(call, run.spec.ctas > 0 && ctas != ctas_comms_.end() ? ctas->second : nccl_));
  return true;
}

std::optional<std::size_t> RuntimeComm::PoolOffset(const void* p, std::uint64_t bytes) const {
  if (!pool_ || !pool_shared_) return std::nullopt;
  const char* base = PoolBase();
  const auto* at = static_cast<const char*>(p);
  if (at < base || bytes > pool_->capacity() ||
      static_cast<std::uint64_t>(at - base) > pool_->capacity() - bytes) {
    return std::nullopt;
  }
  const auto offset = static_cast<std::size_t>(at - base);
  if (!pool_->Containing(offset, bytes)) return std::nullopt;
  return offset;
}

bool RuntimeComm::GroupBuffers(const Call& call) const {
  return call.peer_send != nullptr && call.peer_recv != nullptr && OneProcess() && pool_shared_;
}

BufferClass RuntimeComm::ClassOf(const Call& call, std::uint64_t send_bytes,
                                 std::uint64_t recv_bytes, std::size_t* send_off,
                                 std::size_t* recv_off) const {
  const std::optional<std::size_t> send = PoolOffset(call.send, send_bytes);
  const std::optional<std::size_t> recv = PoolOffset(call.recv, recv_bytes);
  if (!send || !recv) return BufferClass::kPlain;
  *send_off = *send;
  *recv_off = *recv;
  return BufferClass::kPooled;
}

core::Status RuntimeComm::RunNccl(const Call& c, ncclComm_t comm) {
  switch (c.op) {
    case core::Op::kAllReduce:
      CCLTUNE_NCCL_TRY(comm, gpu::Nccl().AllReduce(c.send, c.recv, c.count, c.nccl_type, c.nccl_op,
                                                   comm, c.stream));
      break;
    case core::Op::kAllGather:
      CCLTUNE_NCCL_TRY(comm,
                       gpu::Nccl().AllGather(c.send, c.recv, c.count, c.nccl_type, comm, c.stream));
      break;
    default:
      CCLTUNE_NCCL_TRY(comm, gpu::Nccl().ReduceScatter(c.send, c.recv, c.count, c.nccl_type,
                                                       c.nccl_op, comm, c.stream));
      break;
  }
  return WaitEnqueued(comm, core::Clock::now() + config_.timeout, "NCCL enqueue");
}

core::Status RuntimeComm::RunRsAg(const Call& call, const gpu::OpShape& shape) {
  const core::Deadline deadline = core::Clock::now() + config_.timeout;
  for (int part : {0, 1}) {
    CCLTUNE_RETURN_IF_ERROR(
        gpu::EnqueueRsAgPart(part, shape, call.send, call.recv, nccl_, call.stream));
    CCLTUNE_RETURN_IF_ERROR(WaitEnqueued(nccl_, deadline, "rs+ag enqueue"));
  }
  return core::Status::Ok();
}

core::Result<bool> RuntimeComm::RunPeer(const Call& call, const AppliedRun& run,
                                        const gpu::OpShape& shape, BufferClass cls,
                                        std::size_t send_off, std::size_t recv_off, bool direct) {
  if (run.spec.staged || direct) return RunStaged(call, run, shape, Signature(run, call), direct);
  kernels::PeerOperands ops;
  if (cls == BufferClass::kPooled && GroupBuffers(call)) {
    for (int r = 0; r < world_; ++r) {
      ops.in[r] = call.peer_send[r];
      ops.out[r] = call.peer_recv[r];
    }
  } else if (cls == BufferClass::kPooled) {
    // In place, allGather's input and reduceScatter's output are each rank's own block of
    // the other buffer: at another offset on every rank.
    const std::size_t block = call.count * core::DtypeSize(*call.dtype);
    const bool in_place = InPlace(call, core::DtypeSize(*call.dtype), rank_);
    for (int r = 0; r < world_; ++r) {
      const std::size_t theirs = block * static_cast<std::size_t>(r);
      std::size_t s = send_off, d = recv_off;
      if (in_place && call.op == core::Op::kAllGather) s = recv_off + theirs;
      if (in_place && call.op == core::Op::kReduceScatter) d = send_off + theirs;
      ops.in[r] = peers_->Data(r, config_.staging_bytes + s);
      ops.out[r] = peers_->Data(r, config_.staging_bytes + d);
    }
  } else {
    ops.in[rank_] = call.send;
    ops.out[rank_] = call.recv;
  }
  const std::uint64_t staging =
      kernels::StagingBytes(gpu::PeerAlgoFor(run.spec, call.op), gpu::PeerShapeOf(run.spec),
                            call.count, *call.dtype, world_);
  const std::string signature = Signature(run, call);
  if (staging > 0) {
    bool fits = true;
    CCLTUNE_ASSIGN_OR_RETURN(std::size_t at, StagingFor(signature, staging, call.stream, &fits));
    if (!fits) return false;
    for (int r = 0; r < world_; ++r) ops.staging[r] = peers_->Data(r, at);
  }
  CCLTUNE_RETURN_IF_ERROR(LaunchPeer(call, run, shape, signature, ops));
  return true;
}

core::Status RuntimeComm::LaunchPeer(const Call& call, const AppliedRun& run,
                                     const gpu::OpShape& shape, const std::string& signature,
                                     const kernels::PeerOperands& ops, const PeerCopy& in,
                                     const PeerCopy& out) {
  const gpu::PeerEnqueuer* enqueuer = EnqueuerFor(signature, run.spec, shape);
  if (enqueuer == nullptr) return core::Internal("peer enqueuer for " + run.name);
  const kernels::PeerTeam team =
      TimedTeam(signature, call.op, *call.dtype, RecordBytes(call, world_), run.name);
  // Ordered before a staged copy in too: its region may still be read by this signature's
  // last launch on another stream.
  CCLTUNE_RETURN_IF_ERROR(OrderPeerLaunch(call.stream, /*before=*/true));
  CCLTUNE_RETURN_IF_ERROR(EnqueueCopy(in, call.stream));
  CCLTUNE_RETURN_IF_ERROR(enqueuer->Enqueue(team, ops, call.stream));
  CCLTUNE_RETURN_IF_ERROR(EnqueueCopy(out, call.stream));
  return OrderPeerLaunch(call.stream, /*before=*/false);
}

core::Result<std::size_t> RuntimeComm::StagingFor(const std::string& signature, std::uint64_t bytes,
                                                  cudaStream_t stream, bool* fits, bool shared) {
  const std::optional<StagingPlan::Place> place =
      shared ? staging_.Shared(bytes) : staging_.Own(signature, bytes);
  if (!place) {
    if (!logged_staging_full_ && rank_ == 0) {
      std::fprintf(stderr,
                   "ccltune: staging area (%zu bytes) full at %s: the size's runner-up or NCCL "
                   "runs it; raise ccltuneConfig_t.stagingBytes or CCLTUNE_STAGING_BYTES\n",
                   config_.staging_bytes, signature.c_str());
    }
    logged_staging_full_ = true;
    *fits = false;
    return std::size_t{0};
  }
  if (!place->fresh) return place->at;
  const std::size_t size = PartitionAligned(bytes);
  CCLTUNE_CUDA_TRY(cudaMemsetAsync(peers_->Data(rank_, place->at), 0, size, stream));
  CCLTUNE_RETURN_IF_ERROR(OrderPeerLaunch(stream, /*before=*/true));
  CCLTUNE_CUDA_TRY(kernels::LaunchPeerBarrier(KernelTeam(), stream));
  CCLTUNE_RETURN_IF_ERROR(OrderPeerLaunch(stream, /*before=*/false));
  return place->at;
}

// Our kernels share one signal area: two may never run at once. Eager launches from
// different streams are chained by an event; inside a CUDA graph the graph's own order
// holds (a graph must not run two of our collectives on parallel branches).
core::Status RuntimeComm::OrderPeerLaunch(cudaStream_t stream, bool before) {
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  CCLTUNE_CUDA_TRY(cudaStreamIsCapturing(stream, &capturing));
  if (capturing != cudaStreamCaptureStatusNone) return core::Status::Ok();
  if (before) {
    if (last_peer_stream_ != nullptr && last_peer_stream_ != stream)
      CCLTUNE_CUDA_TRY(cudaStreamWaitEvent(stream, peer_done_.get(), 0));
    return core::Status::Ok();
  }
  CCLTUNE_CUDA_TRY(cudaEventRecord(peer_done_.get(), stream));
  last_peer_stream_ = stream;
  return core::Status::Ok();
}

const gpu::PeerEnqueuer* RuntimeComm::EnqueuerFor(const std::string& key,
                                                  const apply::ChoiceSpec& spec,
                                                  const gpu::OpShape& shape) {
  if (auto it = enqueuers_.find(key); it != enqueuers_.end()) return it->second.get();
  if (enqueuers_.size() >= kMaxEnqueuers) enqueuers_.clear();  // bounded; rebuilt on use
  core::Result<gpu::PeerEnqueuer> made = gpu::PeerEnqueuer::Create(spec, shape);
  if (!made.ok()) return nullptr;
  auto& slot = enqueuers_[key];
  slot = std::make_unique<gpu::PeerEnqueuer>(std::move(made).value());
  return slot.get();
}

std::uint64_t RuntimeComm::KernelTimeoutNs() const {
  return static_cast<std::uint64_t>(config_.timeout.count()) * 1000000ull;
}

kernels::PeerTeam RuntimeComm::KernelTeam(const gpu::PeerMemory& memory) const {
  kernels::PeerTeam team = memory.Team(KernelTimeoutNs());
  team.fail_stop = 1;
  return team;
}

kernels::PeerTeam RuntimeComm::TimedTeam(const std::string& signature, core::Op op,
                                         core::Dtype dtype, std::uint64_t bytes,
                                         std::string_view choice) {
  kernels::PeerTeam team = KernelTeam();
  if (timing_ == nullptr) return team;
  const CallTiming::Launch launch = timing_->Site(signature, op, dtype, bytes, choice);
  team.timing = launch.timing;
  team.site = launch.site;
  return team;
}

core::Status RuntimeComm::AsyncError() const {
  if (watch_ == nullptr) return core::Status::Ok();
  const std::string failed = watch_->Check();
  return failed.empty() ? core::Status::Ok() : core::TimeoutError(failed);
}

std::string RuntimeComm::ChoiceFor(core::Op op, core::Dtype dtype, core::RedOp redop,
                                   std::uint64_t bytes, bool pooled,
                                   const core::Epilogue& epilogue) const {
  std::lock_guard<std::mutex> lock(mu_);
  const BufferClass cls = pooled ? BufferClass::kPooled : BufferClass::kPlain;
  const AppliedRun& run = table_.Choose(op, dtype, redop, bytes, cls, epilogue);
  // An in-program trial's verdict (dispatch_confirm.cc): NCCL's own, or the runner-up (for the
  // calls it can run, as their shapes allow).
  const auto trial = trials_.find(&run);
  if (trial == trials_.end() || !trial->second.verdict) return run.name;
  if (trial->second.Lost()) return "nccl";
  return trial->second.candidates[static_cast<std::size_t>(trial->second.verdict->pick)]->name;
}

core::Result<void*> RuntimeComm::MemAlloc(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!pool_) {
    return core::FailedPrecondition("no pool: set ccltuneConfig_t.poolBytes or CCLTUNE_POOL_BYTES");
  }
  std::optional<std::size_t> at = pool_->Allocate(bytes);
  if (!at) {
    return core::FailedPrecondition("pool: no free range of " + std::to_string(bytes) + " bytes (" +
                                    std::to_string(pool_->used()) + " of " +
                                    std::to_string(pool_->capacity()) + " in use)");
  }
  return static_cast<void*>(PoolBase() + *at);
}

core::Status RuntimeComm::MemFree(void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  if (pool_) {
    const char* base = PoolBase();
    const auto* p = static_cast<const char*>(ptr);
    if (p >= base && pool_->Free(static_cast<std::size_t>(p - base))) return core::Status::Ok();
  }
  return core::InvalidArgument("ptr: not a buffer from ccltuneMemAlloc on this communicator");
}

}  // namespace ccltune::runtime
