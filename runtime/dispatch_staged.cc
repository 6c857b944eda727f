// Staged peer kernels (staged=1, core/apply/staged.h; issue 43): a kernel that reads or
// writes the peers' buffers runs on any buffer of the program, eager or captured in a CUDA
// graph, by copying the call's input into a region of peer memory first and, where the
// peers share the kernel's output, the result out of it after. The region (staging_plan.h:
// the same offset on every rank) is laid out [input | output (copies.out) | push staging
// (push modes)]: a push kernel's is its signature's own partition, zeroed and met at first
// use; a pull kernel's is the partition every pull launch shares. The worker measured
// exactly these copies around the same kernel, so the tuned time holds.
//
// Reuse: the next launch copies into the region again only after OrderPeerLaunch ordered it
// behind this call's kernel (LaunchPeer), and that kernel's last barrier means no peer reads
// this rank's region any more (pull: so the next pull launch may be of any shape), or its
// first barrier of the next launch of the signature guards the push staging
// (peer_reduce.cu). Inside a graph the graph's order holds.
//
// A staged pull kernel (apply::StagesInKernel) copies in and out inside its own launch: the
// reduce-scatter and all-gather given the call's input (PeerOperands::own_in), the
// all-reduces as the kernel of direct mode with a slot no rank vouches for
// (unvouched_slot_); so no copy surrounds it, eager or captured. Captured in a CUDA graph by a
// multi-process clique, it takes a slot of the direct exchange instead (direct_exchange.h): the
// kernel then copies nothing when every rank vouches for the slot at the launch, and copies as
// above otherwise.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>

#include "core/apply/any_buffer.h"
#include "core/apply/staged.h"
#include "core/base/env_switch.h"
#include "runtime/direct/cuda_backend.h"
#include "runtime/runtime_comm.h"
#include "runtime/telemetry/call_timing.h"

namespace ccltune::runtime {
namespace {

constexpr int kDirectSlots = 16384;  // 144 bytes each on the device

// 128 bits from the system's entropy, as hex (direct::kTokenBytes characters).
std::string RandomToken() {
  std::random_device rd;
  char out[direct::kTokenBytes + 1];
  for (std::size_t i = 0; i < direct::kTokenBytes; i += 8) {
    std::snprintf(out + i, 9, "%08x", static_cast<unsigned int>(rd()));
  }
  return std::string(out, direct::kTokenBytes);
}

}  // namespace

// Why this rank cannot run captured calls on the program's buffers, or empty: a
// multi-process clique on one node with peer memory up, CCLTUNE_DIRECT not 0, and a program
// that registers its memory (segment_registry.h; PyTorch's allocator hook has registered
// its segments by the first collective). Then the exchange, started here.
std::string RuntimeComm::DirectProblem(const std::string& token) {
  const core::Result<bool> on =
      core::EnvSwitch("CCLTUNE_DIRECT", std::getenv("CCLTUNE_DIRECT"),
                      "captured calls always staged", "direct when ready");
  if (!on.ok()) return on.status().message();
  if (!*on) return "turned off (CCLTUNE_DIRECT=0)";
  if (OneProcess() || processes_ != world_) return "not one rank per process";
  if (!peers_ || !peers_->usable()) return "no peer memory";
  if (direct::SegmentRegistry::Get().Empty()) return "the program registers no memory";
  core::Result<std::unique_ptr<direct::DirectBackend>> backend =
      direct::MakeCudaBackend(device_, kDirectSlots);
  if (!backend.ok()) return backend.status().message();
  core::Result<std::unique_ptr<direct::DirectExchange>> made =
      direct::DirectExchange::Start({"ccltune-d/" + std::to_string(CommHash(clique_)), token, rank_,
                                     world_, kDirectSlots, device_, config_.timeout},
                                    std::move(backend).value());
  if (!made.ok()) return made.status().message();
  direct_ = std::move(made).value();
  return {};
}

// Collective: every rank runs direct mode or none does, since the kernels differ (a direct
// launch's barriers carry the votes); so with holding one-shot results in place.
core::Status RuntimeComm::StartDirect(core::Deadline deadline) {
  CCLTUNE_RETURN_IF_ERROR(AgreeOnHold(deadline));
  std::optional<std::string> fresh;
  if (rank_ == 0) fresh = RandomToken();
  CCLTUNE_ASSIGN_OR_RETURN(const std::string token,
                           dir_->Broadcast("direct-token", 0, fresh, deadline));
  const std::string mine = DirectProblem(token);
  CCLTUNE_ASSIGN_OR_RETURN(direct_problem_,
                           core::FirstRankProblem(*dir_, "direct", mine, "direct", deadline));
  if (!direct_problem_.empty()) direct_.reset();
  return core::Status::Ok();
}

core::Status RuntimeComm::AgreeOnHold(core::Deadline deadline) {
  const std::string mine = config_.hold_in_place ? "" : "CCLTUNE_HOLD_IN_PLACE is 0";
  CCLTUNE_ASSIGN_OR_RETURN(const std::string first,
                           core::FirstRankProblem(*dir_, "hold", mine, "setting", deadline));
  config_.hold_in_place = first.empty();
  return core::Status::Ok();
}

bool RuntimeComm::DirectCapture(const Call& call) const {
  return direct_ != nullptr && call.op == core::Op::kAllReduce &&
         gpu::CaptureOf(call.stream) == gpu::Capture::kYes;
}

// A run direct mode runs: the pull one-shot or two-shot all-reduce the table's rule names
// (apply::RunsDirect), staged or not. A one-shot in place holds its results in registers until
// the peers have read its buffer: only where they fit (kernels::kHeldVectors).
bool RuntimeComm::Directable(const AppliedRun& run, const Call& call) const {
  if (!apply::RunsDirect(apply::UnstagedOf(run.spec), call.op)) return false;
  if (run.spec.peer == apply::PeerKind::kTwoShot) return true;
  return call.send != call.recv ||
         (config_.hold_in_place &&
          apply::OneShotHoldsInPlace(run.spec, call.count, core::DtypeSize(*call.dtype)));
}

const AppliedRun* RuntimeComm::FirstDirectable(
    const Call& call, const CallShape& shape, std::initializer_list<const AppliedRun*> runs) const {
  for (const AppliedRun* run : runs) {
    apply::ChoiceSpec as_staged = run->spec;  // what RunStaged runs: in place included
    as_staged.staged = true;
    if (Directable(*run, call) && WhyNotForCall(as_staged, shape, BufferClass::kPooled).empty())
      return run;
  }
  return nullptr;
}

const void* RuntimeComm::DirectSlotFor(const Call& call, const AppliedRun& run) {
  const std::uint64_t bytes = call.count * core::DtypeSize(*call.dtype);
  const std::uint64_t signature =
      CommHash(run.name + "|" + std::to_string(call.count) + "|" +
               std::to_string(static_cast<int>(*call.dtype)) + "|" +
               std::to_string(static_cast<int>(*call.redop)) + "|" + std::to_string(world_));
  return direct_->Capture({call.send, bytes, call.recv, bytes, signature, true});
}

core::Result<bool> RuntimeComm::RunStaged(const Call& call, const AppliedRun& run,
                                          const gpu::OpShape& shape, const std::string& signature,
                                          bool direct) {
  apply::ChoiceSpec as_staged = run.spec;  // a direct run has the same layout
  as_staged.staged = true;
  const apply::StagedCopies copies = apply::StagedCopiesOf(as_staged, call.op);
  const std::size_t esize = core::DtypeSize(*call.dtype);
  const std::uint64_t in_bytes = SendElems(call.op, call.count, world_) * esize;
  const std::uint64_t out_bytes = RecvElems(call.op, call.count, world_) * esize;
  const std::uint64_t out_at = PartitionAligned(in_bytes);
  // The output region always: a direct-mode one-shot's fallback may need it, and a signature's
  // partition has one size whether its calls are captured or not.
  const std::uint64_t push_at = out_at + PartitionAligned(out_bytes);
  const std::uint64_t push_bytes =
      kernels::StagingBytes(gpu::PeerAlgoFor(run.spec, call.op), gpu::PeerShapeOf(run.spec),
                            call.count, *call.dtype, world_);
  // A pull launch (no push staging) takes the partition all of them share (staging_plan.h).
  bool fits = true;
  CCLTUNE_ASSIGN_OR_RETURN(const std::size_t at, StagingFor(signature, push_at + push_bytes,
                                                            call.stream, &fits, push_bytes == 0));
  if (!fits) return false;
  kernels::PeerOperands ops;
  for (int r = 0; r < world_; ++r) {
    ops.in[r] = peers_->Data(r, at);
    if (copies.out) ops.out[r] = peers_->Data(r, at + out_at);
    if (push_bytes > 0) ops.staging[r] = peers_->Data(r, at + push_at);
  }
  if (!copies.out) ops.out[rank_] = call.recv;  // only this rank writes it
  if (copies.in_kernel && !copies.slot) {       // the pull reduce-scatter and all-gather
    ops.own_in = call.send;
    CCLTUNE_RETURN_IF_ERROR(LaunchPeer(call, run, shape, signature, ops));
    return true;
  }
  // Direct mode's slot for this capture; else, for the pull all-reduces, the slot no rank
  // vouches for: either way the kernel copies in and out itself where it must.
  const void* slot = direct ? DirectSlotFor(call, run) : nullptr;
  if (slot == nullptr && copies.slot) slot = unvouched_slot_.data();
  if (slot != nullptr) {
    ops.direct = static_cast<const kernels::DirectSlot*>(slot);
    ops.out[rank_] = peers_->Data(rank_, at + out_at);  // one-shot's fallback, where needed
    ops.own_in = call.send;
    ops.own_out = call.recv;
    CCLTUNE_RETURN_IF_ERROR(LaunchPeer(call, run, shape, signature, ops));
    return true;
  }
  const PeerCopy in{peers_->Data(rank_, at), call.send, in_bytes};
  const PeerCopy out =
      copies.out ? PeerCopy{call.recv, peers_->Data(rank_, at + out_at), out_bytes} : PeerCopy{};
  CCLTUNE_RETURN_IF_ERROR(LaunchPeer(call, run, shape, signature, ops, in, out));
  return true;
}

}  // namespace ccltune::runtime
