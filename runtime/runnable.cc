// The runtime's runnable-choice rules (runnable.h).
#include "runtime/runnable.h"

#include "core/apply/any_buffer.h"
#include "core/apply/node_span.h"
#include "core/plan/choice.h"

namespace ccltune::runtime {
namespace {

using apply::ChoiceSpec;
using apply::Composition;
using apply::PeerKind;

std::string WhyNotNccl(const ChoiceSpec& s, const core::Problem& problem, int world) {
  if (s.algo >= 0) {
    return "a forced NCCL algorithm/protocol is the tuner plugin's to apply "
           "(NCCL_TUNER_PLUGIN=libnccl-tuner-ccltune.so)";
  }
  if (s.p2p_chunk > 0) return "no per-communicator P2P chunk size in NCCL 2.28";
  if (s.net.any()) {
    return "NCCL reads its network settings once per process: they apply through the "
           "environment before NCCL's first communicator, not per call";
  }
  // Registered or symmetric buffers: the pool is CUDA IPC memory, not NCCL's either.
  if (s.buffers != apply::BufferMode::kPlain) return apply::WhyNotAnyBuffer(s, problem.op);
  if (s.compose == Composition::kReduceScatterAllGather) {
    if (problem.op != core::Op::kAllReduce) return "rs+ag composes an allReduce only";
    const std::uint64_t count = core::ElementCount(problem.op, problem.dtype, problem.bytes, world);
    if (count % static_cast<std::uint64_t>(world) != 0) {
      return "element count not divisible by the world size";
    }
  }
  return "";
}

// NCCL read its network settings once, at its first init in this process: the winner's
// settings are what it measured only when they are this process's now.
std::string WhyNotProcessSettings(const ChoiceSpec& s, const Capabilities& caps) {
  for (const auto& [name, value] : apply::NetSettingsEnv(s.net)) {
    const auto it = caps.process_env.find(name);
    if (it == caps.process_env.end() || it->second != value) {
      return "nccl-net's settings are not this process's (" + name + " is " +
             (it == caps.process_env.end() ? "unset" : "'" + it->second + "'") +
             "; NCCL reads them once, at its first init: libccltune-nccl sets them there)";
    }
  }
  return "";
}

}  // namespace

core::Result<apply::ChoiceSpec> ParseRuntimeChoice(const std::string& name) {
  CCLTUNE_ASSIGN_OR_RETURN(core::ChoiceName parsed, core::ParseChoice(name, "nccl"));
  return apply::SpecFromChoice(parsed);
}

std::string WhyNotRunnable(const ChoiceSpec& s, const core::Problem& problem,
                           const Capabilities& caps, BufferClass cls) {
  if (s.net.any()) return WhyNotProcessSettings(s, caps);
  if (!s.unsupported.empty()) return s.unsupported;
  if (s.compose == Composition::kBoundedSpin || s.absent_test) return "a test choice";
  if (s.compose == Composition::kHierarchical) {
    // Both buffer classes: the phases run in the node team's scratch, never on the call's
    // buffers (runnable.h).
    if (!caps.hier_problem.empty()) return "no node team: " + caps.hier_problem;
    return apply::NodeSpanSkipReason(s, problem, caps.span);
  }
  if (s.compose != Composition::kPeer) return WhyNotNccl(s, problem, caps.world);
  if (!caps.peer_problem.empty()) return "peer memory unavailable: " + caps.peer_problem;
  if (std::string why = apply::PeerSkipReason(s, problem, caps.world); !why.empty()) return why;
  // Pooled buffers run every peer kernel; plain ones only those the shared rule allows.
  return cls == BufferClass::kPlain ? apply::WhyNotAnyBuffer(s, problem.op) : "";
}

std::uint64_t HierScratchBytes(std::uint64_t bytes) {
  const std::uint64_t a = kHierScratchAlignment;
  return 2 * ((bytes + a - 1) / a * a);
}

std::string WhyNotForCall(const ChoiceSpec& s, const CallShape& call, BufferClass cls) {
  if (call.count == 0) return "no element per rank";
  if (s.compose == Composition::kHierarchical) {
    if (call.count % static_cast<std::uint64_t>(call.ranks_per_node) != 0) {
      return "element count not divisible by the ranks per node";
    }
    const std::uint64_t need = HierScratchBytes(call.count * core::DtypeSize(call.dtype));
    if (need > call.hier_scratch_bytes) {
      return "hier copies input and output through " + std::to_string(need) +
             " bytes of node scratch; it holds " + std::to_string(call.hier_scratch_bytes) +
             " (raise ccltuneConfig_t.stagingBytes)";
    }
    return "";
  }
  if (s.compose == Composition::kReduceScatterAllGather &&
      call.count % static_cast<std::uint64_t>(call.world) != 0) {
    return "element count not divisible by the world size";
  }
  if (s.compose != Composition::kPeer) return "";
  // One-shot pull reduces the peers' inputs while they write their outputs: in place, a
  // peer would read what its owner already overwrote, unless the results wait in registers
  // until every rank has read (staged, they read its copy).
  if (s.peer == PeerKind::kOneShot && !s.push && !s.ll && !s.staged && call.in_place) {
    if (s.fused || !call.hold_in_place) return "one-shot pull cannot run in place";
    if (!apply::OneShotHoldsInPlace(s, call.count, core::DtypeSize(call.dtype))) {
      return "one-shot pull in place holds at most " +
             std::to_string(apply::kHeldVectorsParam * 16 * s.blocks * s.threads) +
             " bytes in its registers";
    }
  }
  // LL reads the input in whole 8-byte lines; an application's buffer may end sooner.
  const std::uint64_t bytes = call.count * core::DtypeSize(call.dtype);
  if (s.ll && cls == BufferClass::kPlain && bytes % 8 != 0) {
    return "LL reads whole 8-byte lines: message not a multiple of 8 bytes";
  }
  return "";
}

}  // namespace ccltune::runtime
