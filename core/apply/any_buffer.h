// Which measured choices run on any buffer of a program (its own tensors, as an unmodified
// program passes them to NCCL) and which only on buffers from the runtime's shared pool
// (ccltuneMemAlloc: one offset of every rank's CUDA IPC pool) or registered with NCCL.
// The rule depends only on the choice and the op, so every part applies the same one: the
// worker records the fastest any-buffer choice beside the winner and its adaptive search
// never prunes it (docs/design.md §2, §4); the runtime (runtime/runnable.h) adds what one
// process can run (peer memory, node team, NCCL's settings) on top.
//
//   any buffer   nccl, nccl:algo/proto (the tuner plugin forces them per call), nccl:ctas=N,
//                nccl:p2pchunk, nccl-net (process settings), rs+ag, hier (it copies through
//                its node scratch), oneshot mode=push|ll and twoshot mode=push for
//                reduceScatter (each rank writes its own input into the peers' staging and
//                reduces locally); the host backend's algorithms (the caller's buffers);
//                any peer kernel with staged=1 (its input copied into the runtime's peer
//                memory first, its output back where it shares outputs: staged.h)
//   pooled only  oneshot mode=pull, twoshot (allReduce; reduceScatter pull), p2p, ce: they
//                read or write the peers' buffers themselves; oneshot-fused, twoshot-fused
//                (input, out and residual of every rank); test-pooled (host, tests only)
//   registered   nccl-reg (ncclCommRegister), nccl-symm (an NCCL symmetric window)
// Of the pooled-only kernels, oneshot mode=pull and twoshot mode=pull all-reduces also run on
// a program's own tensors in CUDA graphs where it registers its memory (the runtime's direct
// mode, docs/design.md §5): their reach is core::BufferReach::kRegistered.
// With an epilogue every unfused name means that all-reduce and then the separate epilogue
// kernel: it needs what the plain all-reduce needs.
#pragma once

#include <string>

#include "core/apply/choice_spec.h"
#include "core/plan/choice.h"
#include "core/plan/types.h"

namespace ccltune::apply {

// `s` without staged=1: the kernel as it runs on pooled buffers.
ChoiceSpec UnstagedOf(ChoiceSpec s);

// Empty when `spec` runs `op` on any buffer; else which buffers it needs, in one line.
std::string WhyNotAnyBuffer(const ChoiceSpec& spec, core::Op op);

// The same for a name of `backend` ("nccl" or "host"). A name that does not read as a choice
// of that backend runs nowhere: its parse error is the reason.
std::string WhyNotAnyBuffer(const core::ChoiceName& choice, core::Op op,
                            const std::string& backend);

// Empty when an eager program's own buffers may run `spec` as far as what the choice is goes
// (reach and cost to issue are asked apart); else why not. NCCL on a communicator the runtime
// splits with minCTAs = maxCTAs = N (`nccl:ctas=N`) may not: the tune times it alone, while an
// eager program's calls overlap its own kernels (DDP's bucket all-reduces run during the
// backward pass), and there it ran slower than NCCL's own (issue 43: 0.70x per call in a DDP
// step on 4x H100; eager 4 MiB all-reduces slower in 6 of 8 pairs on 4x H200). Graph tunes'
// records, pooled buffers and captured calls keep it.
std::string WhyNotEager(const ChoiceSpec& spec);
// The same for a name of `backend`; the host backend's algorithms are always eager-safe.
std::string WhyNotEager(const core::ChoiceName& choice, const std::string& backend);

// Whether a program's own buffers run `choice` of `backend` for `op`: it reaches any buffer
// and, where the calls are eager (an eager tune's), WhyNotEager has nothing against it. The
// tune's anyBuffer and its adaptive search count these; the runtime asks the same per call.
bool ServesOwnBuffers(const core::ChoiceName& choice, core::Op op, const std::string& backend,
                      bool eager);

// How far `spec` reaches for `op` (core::BufferReach): any buffer, registered tensors in CUDA
// graphs (the kernels direct mode runs: RunsDirect), or pooled buffers only.
bool RunsDirect(const ChoiceSpec& spec, core::Op op);
core::BufferReach ReachOf(const ChoiceSpec& spec, core::Op op);
// The same for a name of `backend`; a name that does not read as a choice reaches nothing
// beyond the pool.
core::BufferReach ReachOf(const core::ChoiceName& choice, core::Op op, const std::string& backend);

// The test-only host choice that stands for a pooled-only kernel (a pull one-shot): the
// search's tests need a winner that an application's own buffers cannot run
// (worker/host/algorithms.h says how it is timed).
inline constexpr const char* kTestPooledChoice = "test-pooled";

}  // namespace ccltune::apply
