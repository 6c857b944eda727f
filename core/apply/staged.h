// What a staged peer kernel (staged=1, choice_spec.h) copies, so that the worker measures
// and the runtime runs the same thing. A staged call runs the pooled kernel on a region of
// the runtime's peer memory at the same offset on every rank (the worker's peer buffers, the
// runtime's staging partition of the call's signature):
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
// Where the copies run: the pull one-shot (not LL) and pull two-shot all-reduce make them
// inside their own launch (StagesInKernel). They run the kernels of direct mode
// (peer_kernels.h, DirectSlot) with a slot no rank vouches for, so every rank takes the
// kernel's staged path: each block copies its share of the input into the region, then a
// barrier that carries those writes, then the pull, and for two-shot the copy out. One
// launch, with no copy node before or after it: eager calls issue one kernel instead of three
// operations. Every other staged kernel gets cudaMemcpyAsync copies around it.
#pragma once

#include "core/apply/choice_spec.h"
#include "core/plan/types.h"

namespace ccltune::apply {

struct StagedCopies {
  bool in = false;         // copy the call's input into the region before the kernel
  bool out = false;        // the kernel's output lies in the region: copy it out after
  bool in_kernel = false;  // the kernel makes both copies itself (StagesInKernel)
};

// A staged pull one-shot (not LL) or pull two-shot all-reduce: the kernels direct mode runs,
// which can copy in and out inside the launch (see the header comment).
inline bool StagesInKernel(const ChoiceSpec& s, core::Op op) {
  return s.staged && s.compose == Composition::kPeer && op == core::Op::kAllReduce && !s.push &&
         !s.ll && !s.fused && (s.peer == PeerKind::kOneShot || s.peer == PeerKind::kTwoShot);
}

// {false, false, false} for a choice that is not staged.
inline StagedCopies StagedCopiesOf(const ChoiceSpec& s, core::Op op) {
  if (!s.staged || s.compose != Composition::kPeer) return {};
  const bool peers_touch_out =
      (s.peer == PeerKind::kTwoShot && op == core::Op::kAllReduce) ||
      ((s.peer == PeerKind::kCopyKernel || s.peer == PeerKind::kCopyEngine) && s.push);
  return {true, peers_touch_out, StagesInKernel(s, op)};
}

}  // namespace ccltune::apply
