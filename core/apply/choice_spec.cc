// NCCL choice names → ChoiceSpec, and whether a peer kernel can run a problem
// (choice_spec.h).
#include "core/apply/choice_spec.h"

#include <algorithm>
#include <charconv>

#include "core/apply/any_buffer.h"
#include "core/apply/tuner_abi.h"

namespace ccltune::apply {
namespace {

core::Result<int> ParseAlgo(const std::string& v) {
  if (v == "ring") return static_cast<int>(abi::kAlgoRing);
  if (v == "tree") return static_cast<int>(abi::kAlgoTree);
  return core::InvalidArgument("algo '" + v + "' is not one of ring, tree");
}

core::Result<int> ParseProto(const std::string& v) {
  if (v == "ll") return static_cast<int>(abi::kProtoLL);
  if (v == "ll128") return static_cast<int>(abi::kProtoLL128);
  if (v == "simple") return static_cast<int>(abi::kProtoSimple);
  return core::InvalidArgument("proto '" + v + "' is not one of ll, ll128, simple");
}

core::Result<int> ParsePositive(const std::string& key, const std::string& v) {
  int n = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || n <= 0) {
    return core::InvalidArgument(key + " '" + v + "' is not a positive integer");
  }
  return n;
}

core::Status ApplyParam(const std::string& key, const std::string& value, ChoiceSpec& spec) {
  if (key == "algo") {
    CCLTUNE_ASSIGN_OR_RETURN(spec.algo, ParseAlgo(value));
  } else if (key == "proto") {
    CCLTUNE_ASSIGN_OR_RETURN(spec.proto, ParseProto(value));
  } else if (key == "ctas") {
    CCLTUNE_ASSIGN_OR_RETURN(spec.ctas, ParsePositive(key, value));
    if (std::find(std::begin(kCtasValues), std::end(kCtasValues), spec.ctas) ==
        std::end(kCtasValues)) {
      return core::InvalidArgument("ctas '" + value + "' is not one of 2, 4, 8, 16, 32");
    }
  } else if (key == "p2pchunk") {
    CCLTUNE_ASSIGN_OR_RETURN(spec.p2p_chunk, ParsePositive(key, value));
  } else {
    return core::InvalidArgument("parameter '" + key +
                                 "' is not one of algo, proto, ctas, p2pchunk");
  }
  return core::Status::Ok();
}

// `blocks` or `threads` of our kernels' grid (peer choices and hier's node phases).
core::Status ApplyGridParam(const std::string& key, const std::string& value, ChoiceSpec& spec) {
  if (key == "blocks") {
    CCLTUNE_ASSIGN_OR_RETURN(spec.blocks, ParsePositive(key, value));
    if (spec.blocks > kMaxPeerBlocksParam) {
      return core::InvalidArgument("blocks '" + value + "' is more than " +
                                   std::to_string(kMaxPeerBlocksParam));
    }
    return core::Status::Ok();
  }
  CCLTUNE_ASSIGN_OR_RETURN(spec.threads, ParsePositive(key, value));
  if (spec.threads % 32 != 0 || spec.threads > 1024) {
    return core::InvalidArgument("threads '" + value + "' is not a multiple of 32 up to 1024");
  }
  return core::Status::Ok();
}

core::Status ApplyPeerParam(const std::string& key, const std::string& value, ChoiceSpec& spec) {
  if (key == "mode" && spec.fused) {
    const bool ll_ok = spec.peer == PeerKind::kOneShot;
    if (value != "pull" && (value != "ll" || !ll_ok)) {
      return core::InvalidArgument("mode '" + value + "' is not one of pull" +
                                   std::string(ll_ok ? ", ll" : " (ll is one-shot only)") +
                                   " (fused kernels do not push)");
    }
    spec.push = value == "ll";
    spec.ll = value == "ll";
    return core::Status::Ok();
  }
  if (key == "mode") {
    const bool ll_ok = spec.peer == PeerKind::kOneShot;
    if (value != "pull" && value != "push" && (value != "ll" || !ll_ok)) {
      return core::InvalidArgument("mode '" + value + "' is not one of pull, push" +
                                   (ll_ok ? ", ll" : " (ll is one-shot only)"));
    }
    spec.push = value != "pull";
    spec.ll = value == "ll";
    return core::Status::Ok();
  }
  if (spec.peer == PeerKind::kCopyEngine) {
    return core::InvalidArgument("parameter '" + key + "' is not one of mode");
  }
  if (key == "staged" && !spec.fused) {
    if (value != "1") return core::InvalidArgument("staged '" + value + "' is not one of 1");
    // Keys come sorted, so mode (if named) was read already.
    if (spec.ll) {
      return core::InvalidArgument("staged does not apply to mode=ll (LL runs on any buffer)");
    }
    spec.staged = true;
    return core::Status::Ok();
  }
  if (key == "blocks" || key == "threads") return ApplyGridParam(key, value, spec);
  if (key != "unroll" || spec.fused) {
    return core::InvalidArgument("parameter '" + key +
                                 "' is not one of blocks, threads, mode, staged, unroll");
  }
  CCLTUNE_ASSIGN_OR_RETURN(spec.unroll, ParsePositive(key, value));
  if (spec.unroll > kMaxUnrollParam) {
    return core::InvalidArgument("unroll '" + value + "' is not one of 1, 2");
  }
  if (spec.ll) return core::InvalidArgument("unroll does not apply to mode=ll");
  return core::Status::Ok();
}

// nccl-net's keys; at least one, and at most NCCL's 64 sockets per connection.
core::Status ApplyNetParams(const core::ChoiceName& choice, NetSettings& net) {
  for (const auto& [key, value] : choice.params) {
    int* field = key == "socketThreads"    ? &net.socket_threads
                 : key == "socksPerThread" ? &net.socks_per_thread
                 : key == "ibQps"          ? &net.ib_qps
                                           : nullptr;
    if (field != nullptr) {
      CCLTUNE_ASSIGN_OR_RETURN(*field, ParsePositive(key, value));
    } else if (key == "buffSize") {
      CCLTUNE_ASSIGN_OR_RETURN(const int bytes, ParsePositive(key, value));
      net.buff_size = static_cast<std::uint64_t>(bytes);
    } else {
      return core::InvalidArgument("parameter '" + key +
                                   "' is not one of socketThreads, socksPerThread, buffSize, "
                                   "ibQps");
    }
  }
  if (!net.any()) {
    return core::InvalidArgument(
        "nccl-net needs at least one of socketThreads, socksPerThread, buffSize, ibQps");
  }
  if (net.socket_threads * net.socks_per_thread > 64) {
    return core::InvalidArgument(
        "socketThreads x socksPerThread must be at most 64 (NCCL's "
        "MAX_SOCKETS; NCCL would lower it with a warning)");
  }
  return core::Status::Ok();
}

// hier's keys: the shape of the intra-node reduce-scatter and all-gather kernels.
core::Status ApplyHierParams(const core::ChoiceName& choice, ChoiceSpec& spec) {
  for (const auto& [key, value] : choice.params) {
    if (key != "blocks" && key != "threads") {
      return core::InvalidArgument("parameter '" + key + "' is not one of blocks, threads");
    }
    CCLTUNE_RETURN_IF_ERROR(ApplyGridParam(key, value, spec));
  }
  return core::Status::Ok();
}

PeerKind PeerKindOf(const std::string& base) {
  if (base == "oneshot" || base == "test-absent" || base == "oneshot-fused") {
    return PeerKind::kOneShot;
  }
  if (base == "twoshot" || base == "twoshot-fused") return PeerKind::kTwoShot;
  if (base == "p2p") return PeerKind::kCopyKernel;
  if (base == "ce") return PeerKind::kCopyEngine;
  return PeerKind::kNone;
}

bool Reduces(PeerKind k) { return k == PeerKind::kOneShot || k == PeerKind::kTwoShot; }

// Why a fused kernel cannot run `problem` (empty: it can).
std::string FusedSkipReason(const ChoiceSpec& s, const core::Problem& problem) {
  if (problem.epilogue.none()) {
    return "fused kernels run an all-reduce with an epilogue (the plan entry has none)";
  }
  const int hidden = problem.epilogue.hidden;
  if (hidden > s.threads * kFusedElementsPerThread) {
    return "a row of " + std::to_string(hidden) + " needs at least " +
           std::to_string((hidden + kFusedElementsPerThread - 1) / kFusedElementsPerThread) +
           " threads (a block keeps its row in registers)";
  }
  return "";
}

}  // namespace

std::string OwnReductionSkipReason(const core::Problem& problem) {
  if (problem.dtype != core::Dtype::kFp32 && problem.dtype != core::Dtype::kFp16 &&
      problem.dtype != core::Dtype::kBf16) {
    return "own kernels reduce fp32, fp16 and bf16 (fp32 accumulation)";
  }
  if (problem.redop != core::RedOp::kSum && problem.redop != core::RedOp::kMax &&
      problem.redop != core::RedOp::kMin && problem.redop != core::RedOp::kAvg) {
    return "own kernels implement sum, max, min and avg";
  }
  return "";
}

// Why a peer choice cannot run `problem` (empty: it can).
std::string PeerSkipReason(const ChoiceSpec& s, const core::Problem& problem, int world) {
  const core::Op op = problem.op;
  if (s.fused) {
    const std::string why = FusedSkipReason(s, problem);
    if (!why.empty()) return why;
  }
  if (s.peer == PeerKind::kOneShot && op != core::Op::kAllReduce) return "one-shot is an allReduce";
  if (s.peer == PeerKind::kTwoShot && op != core::Op::kAllReduce &&
      op != core::Op::kReduceScatter) {
    return "two-shot is an allReduce (or its reduceScatter half)";
  }
  if (!Reduces(s.peer) && op != core::Op::kAllGather) return "peer copies implement allGather";
  if (Reduces(s.peer)) {
    if (std::string why = OwnReductionSkipReason(problem); !why.empty()) return why;
  }
  if (s.peer == PeerKind::kOneShot && problem.bytes > kOneShotMaxBytes) {
    return "one-shot moves (world-1)x the message into each rank; not tuned above 16 MiB "
           "(two-shot covers larger messages)";
  }
  if (s.ll && problem.bytes > kLLMaxBytes) {
    return "LL doubles the bytes on NVLink; not tuned above 1 MiB";
  }
  if (s.staged && WhyNotAnyBuffer(UnstagedOf(s), op).empty()) {
    return "staged: this kernel runs on any buffer unstaged (only this rank's buffers and the "
           "peers' staging)";
  }
  if (s.threads < world) return "threads must be at least the world size";
  if (Reduces(s.peer) && s.threads > kMaxReduceThreadsParam) {
    return "reducing kernels run at most 512 threads per block (registers)";
  }
  return "";
}

core::Result<ChoiceSpec> SpecFromChoice(const core::ChoiceName& choice) {
  ChoiceSpec spec;
  const std::string& b = choice.base;
  if (b == "nccl-reg") {
    spec.buffers = BufferMode::kRegistered;
  } else if (b == "nccl-symm") {
    spec.buffers = BufferMode::kSymmetric;
  } else if (b == "rs+ag") {
    spec.compose = Composition::kReduceScatterAllGather;
  } else if (b == "test-hang") {
    spec.compose = Composition::kBoundedSpin;
  } else if (PeerKindOf(b) != PeerKind::kNone) {
    spec.compose = Composition::kPeer;
    spec.peer = PeerKindOf(b);
    spec.absent_test = b == "test-absent";
    spec.fused = b == "oneshot-fused" || b == "twoshot-fused";
  } else if (b == "nccl-net") {
    // Measured by rank processes of its own (process_setting.h), never prepared in these.
    CCLTUNE_RETURN_IF_ERROR(ApplyNetParams(choice, spec.net).WithContext(choice.ToString()));
    return spec;
  } else if (b == "hier") {
    spec.compose = Composition::kHierarchical;
    CCLTUNE_RETURN_IF_ERROR(ApplyHierParams(choice, spec).WithContext(choice.ToString()));
    return spec;
  } else if (b != "nccl") {
    return core::InvalidArgument("choice base '" + b +
                                 "' is not one of nccl, nccl-reg, nccl-symm, rs+ag, oneshot, "
                                 "twoshot, oneshot-fused, twoshot-fused, p2p, ce, nccl-net, "
                                 "hier, test-hang, test-absent");
  }
  for (const auto& [key, value] : choice.params) {
    const core::Status st = spec.peer != PeerKind::kNone ? ApplyPeerParam(key, value, spec)
                                                         : ApplyParam(key, value, spec);
    CCLTUNE_RETURN_IF_ERROR(st.WithContext(choice.ToString()));
  }
  if ((spec.algo >= 0) != (spec.proto >= 0)) {
    return core::InvalidArgument(choice.ToString() + ": algo and proto go together");
  }
  return spec;
}

}  // namespace ccltune::apply
