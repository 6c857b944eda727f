// What a staged peer kernel (staged=1, choice_spec.h) copies, so that the worker measures
// and the runtime runs the same thing. A staged call runs the pooled kernel on a region of
// the runtime's peer memory at the same offset on every rank (the worker's peer buffers, the
// runtime's staging: runtime/staging_plan.h):
//   in   the call's input is copied into the region first (always: the kernel's peers read
//        it, or it is the source of what this rank writes into theirs);
//   out  the kernel's output is the region's, copied to the call's output afterwards, only
//        where a peer reads or writes this rank's output (two-shot all-reduce: the
//        all-gather half; p2p/ce push: the peers write it). Otherwise the kernel writes the
//        call's own output directly (one-shot pull, reduce-scatter, p2p pull: only this rank
//        writes it).
// Reuse of the region by the next call is safe because every pull kernel ends with a barrier
// of all ranks (nobody reads the region any more) and push kernels write it only after
// their first barrier of the next launch.
//
// Where the copies run: every staged pull kernel makes them inside its own launch
// (StagesInKernel): each block copies its share of the input into the region (the share
// the peers' same block reads), then a barrier that carries those writes, then the pull,
// and for two-shot all-reduce the copy out. The all-reduces run the kernels of direct mode
// (peer_kernels.h, DirectSlot) with a slot no rank vouches for (StagedCopies::slot,
// gpu::UnvouchedDirectSlot), so every rank takes their staged path; the pull reduce-scatter
// and all-gather copy when given the program's input (PeerOperands::own_in). One launch,
// with no copy node before or after it: eager calls issue one kernel instead of two or three
// operations. The staged push kernels (two-shot all-reduce, p2p) get cudaMemcpyAsync copies
// around them.
#pragma once

#include "core/apply/choice_spec.h"
#include "core/plan/types.h"

namespace ccltune::apply {

struct StagedCopies {
  bool in = false;         // copy the call's input into the region before the kernel
  bool out = false;        // the kernel's output lies in the region: copy it out after
  bool in_kernel = false;  // the kernel makes the copies itself (StagesInKernel)
  bool slot = false;       // in_kernel through direct mode's kernels: a slot no rank vouches for
};

// A staged pull kernel (not LL, not a copy-engine choice): its launch can copy in and out
// itself (see the header comment).
inline bool StagesInKernel(const ChoiceSpec& s, core::Op op) {
  if (!s.staged || s.compose != Composition::kPeer || s.push || s.ll || s.fused) return false;
  switch (s.peer) {
    case PeerKind::kOneShot:
      return op == core::Op::kAllReduce;
    case PeerKind::kTwoShot:
      return op == core::Op::kAllReduce || op == core::Op::kReduceScatter;
    case PeerKind::kCopyKernel:
      return op == core::Op::kAllGather;
    default:
      return false;
  }
}

// {false, false, false, false} for a choice that is not staged.
inline StagedCopies StagedCopiesOf(const ChoiceSpec& s, core::Op op) {
  if (!s.staged || s.compose != Composition::kPeer) return {};
  const bool peers_touch_out =
      (s.peer == PeerKind::kTwoShot && op == core::Op::kAllReduce) ||
      ((s.peer == PeerKind::kCopyKernel || s.peer == PeerKind::kCopyEngine) && s.push);
  const bool in_kernel = StagesInKernel(s, op);
  return {true, peers_touch_out, in_kernel, in_kernel && op == core::Op::kAllReduce};
}

}  // namespace ccltune::apply
