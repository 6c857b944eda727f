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
#pragma once

#include "core/apply/choice_spec.h"
#include "core/plan/types.h"

namespace ccltune::apply {

struct StagedCopies {
  bool in = false;   // copy the call's input into the region before the kernel
  bool out = false;  // the kernel's output lies in the region: copy it out after
};

// {false, false} for a choice that is not staged.
inline StagedCopies StagedCopiesOf(const ChoiceSpec& s, core::Op op) {
  if (!s.staged || s.compose != Composition::kPeer) return {};
  const bool peers_touch_out =
      (s.peer == PeerKind::kTwoShot && op == core::Op::kAllReduce) ||
      ((s.peer == PeerKind::kCopyKernel || s.peer == PeerKind::kCopyEngine) && s.push);
  return {true, peers_touch_out};
}

}  // namespace ccltune::apply
