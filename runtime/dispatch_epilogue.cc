// RuntimeComm's all-reduce + epilogue calls (runtime_comm.h, issue 16): the epilogue slice's
// choice for the call's buffers and tokens x hidden size, checked against the exact call,
// then either one fused launch or the all-reduce by the plain path's machinery (NCCL, a
// ctas communicator, rs+ag, our unfused kernels) followed by the separate epilogue kernel.
//
// Fused kernels reach every rank's input, out and residual at one offset of the pool (two-
// shot normalises its share of the rows and writes them into every rank), so they run only
// when all three are pooled; their LL staging gets a partition per launch signature, like
// the plain kernels' (dispatch.cc says why).
#include "core/gpu/epilogue_enqueue.h"
#include "runtime/runtime_comm.h"

namespace ccltune::runtime {
namespace {

const AppliedRun kNcclRun{};

// The all-reduce half of an epilogue call: input summed into out.
Call AllReduceOf(const EpilogueCall& c) {
  Call ar;
  ar.op = core::Op::kAllReduce;
  ar.dtype = c.dtype;
  ar.redop = core::RedOp::kSum;
  ar.nccl_type = c.nccl_type;
  ar.nccl_op = ncclSum;
  ar.send = c.input;
  ar.recv = c.out;
  ar.count = c.tokens * static_cast<std::uint64_t>(c.epilogue.hidden);
  ar.stream = c.stream;
  return ar;
}

std::uint64_t BytesOf(const EpilogueCall& c) { return c.tokens * c.epilogue.RowBytes(c.dtype); }

std::string FusedSignature(const AppliedRun& run, const EpilogueCall& c) {
  return run.name + "|" + core::DtypeName(c.dtype) + "|" + c.epilogue.KeyPart() + "|" +
         std::to_string(c.tokens);
}

}  // namespace

core::Status RuntimeComm::RunEpilogue(const EpilogueCall& c) {
  CCLTUNE_RETURN_IF_ERROR(AsyncError());
  DeviceGuard guard(device_);
  std::lock_guard<std::mutex> lock(mu_);
  if (c.tokens == 0) return core::Status::Ok();  // every rank alike: nothing to reduce
  const std::uint64_t bytes = BytesOf(c);
  EpilogueOffsets at;
  const BufferClass cls = EpilogueClassOf(c, &at);
  const CallShape shape{core::Op::kAllReduce,
                        c.dtype,
                        c.tokens * static_cast<std::uint64_t>(c.epilogue.hidden),
                        world_,
                        c.input == c.out,
                        config_.hold_in_place,
                        caps_.span.ranks_per_node,
                        HierScratch()};
  const auto choose = [&](BufferClass k) -> const AppliedRun& {
    return table_.Choose(core::Op::kAllReduce, c.dtype, core::RedOp::kSum, bytes, k, c.epilogue);
  };
  // As for plain calls: what the exact call rules out (one-shot pull in place, fused or
  // not) gives way to the plain buffers' choice, which is never fused, then to NCCL.
  const AppliedRun* run = &choose(cls);
  if (!WhyNotForCall(run->spec, shape, cls).empty() && cls == BufferClass::kPooled) {
    run = &choose(BufferClass::kPlain);
  }
  if (!WhyNotForCall(run->spec, shape, cls).empty()) run = &kNcclRun;
  if (run->spec.fused) return RunFused(c, *run, at);
  // The unfused all-reduce of plain buffers, captured in direct mode: on the tensors, by the
  // rule of a plain call (Choose).
  const Call ar = AllReduceOf(c);
  const bool direct = cls == BufferClass::kPlain && DirectCapture(ar) &&
                      FirstDirectable(ar, shape, {run}) != nullptr;
  return RunUnfused(c, ar, *run, cls, at, direct);
}

BufferClass RuntimeComm::EpilogueClassOf(const EpilogueCall& c, EpilogueOffsets* at) const {
  const std::uint64_t bytes = BytesOf(c);
  const std::optional<std::size_t> in = PoolOffset(c.input, bytes);
  const std::optional<std::size_t> out = PoolOffset(c.out, bytes);
  const bool norm = c.epilogue.kind == core::EpilogueKind::kResidualRmsNorm;
  const std::optional<std::size_t> residual =
      norm ? PoolOffset(c.residual, bytes) : std::optional<std::size_t>(0);
  if (!in || !out || !residual) return BufferClass::kPlain;
  *at = EpilogueOffsets{*in, *out, *residual};
  return BufferClass::kPooled;
}

core::Status RuntimeComm::RunUnfused(const EpilogueCall& c, const Call& ar, const AppliedRun& run,
                                     BufferClass cls, const EpilogueOffsets& at, bool direct) {
  CCLTUNE_ASSIGN_OR_RETURN(const bool enqueued, RunChoice(ar, run, cls, at.in, at.out, direct));
  if (!enqueued) CCLTUNE_RETURN_IF_ERROR(RunNccl(ar, nccl_));  // no staging left
  return gpu::EnqueueEpilogue(gpu::EpilogueParamsOf(c.epilogue, c.weight), c.out, c.residual, c.out,
                              c.tokens, c.dtype, c.stream);
}

core::Status RuntimeComm::RunFused(const EpilogueCall& c, const AppliedRun& run,
                                   const EpilogueOffsets& at) {
  const bool norm = c.epilogue.kind == core::EpilogueKind::kResidualRmsNorm;
  kernels::FusedOperands ops;
  for (int r = 0; r < world_; ++r) {
    ops.in[r] = peers_->Data(r, config_.staging_bytes + at.in);
    ops.out[r] = peers_->Data(r, config_.staging_bytes + at.out);
    if (norm) ops.residual[r] = peers_->Data(r, config_.staging_bytes + at.residual);
  }
  const std::uint64_t staging =
      gpu::FusedStaging(run.spec, c.tokens, c.epilogue.hidden, c.dtype, world_);
  if (staging > 0) {
    bool fits = true;
    CCLTUNE_ASSIGN_OR_RETURN(std::size_t where,
                             StagingFor(FusedSignature(run, c), staging, c.stream, &fits));
    if (!fits) {
      return RunUnfused(c, AllReduceOf(c), kNcclRun, BufferClass::kPooled, at, /*direct=*/false);
    }
    for (int r = 0; r < world_; ++r) ops.staging[r] = peers_->Data(r, where);
  }
  CCLTUNE_RETURN_IF_ERROR(OrderPeerLaunch(c.stream, /*before=*/true));
  const kernels::PeerTeam team =
      TimedTeam(FusedSignature(run, c), core::Op::kAllReduce, c.dtype, BytesOf(c), run.name);
  CCLTUNE_RETURN_IF_ERROR(gpu::EnqueueFused(run.spec, team, ops, c.tokens,
                                            gpu::EpilogueParamsOf(c.epilogue, c.weight), c.dtype,
                                            c.stream));
  return OrderPeerLaunch(c.stream, /*before=*/false);
}

}  // namespace ccltune::runtime
