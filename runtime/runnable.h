// Which measured choices this runtime can run inside an application, and with which
// buffers. Pure C++ (no CUDA): the dispatch table decides with it at init, and CI tests it.
//
// The runtime runs far more than NCCL's tuner can select (the plugin's world), but not
// everything `ccltune tune` measures:
//   nccl, nccl:ctas=N     NCCL on the application's communicator, or on a communicator
//                         split from it with minCTAs = maxCTAs = N (made at init)
//   rs+ag                 ncclReduceScatter then ncclAllGather (count divisible by world)
//   oneshot mode=push|ll  our kernels: each rank writes its input into the peers' staging
//   twoshot mode=push     (peer memory the runtime owns) and reduces locally, so the
//   (reduceScatter)       application's buffers need not be shared: any buffer works
//   oneshot mode=pull,    read or write the peers' buffers themselves: only for buffers
//   twoshot (allReduce),  from ccltuneMemAlloc, which lie at one offset of every rank's
//   p2p, ce               CUDA IPC pool
//   oneshot-fused,        all-reduce + epilogue in one launch (issue 16): only when input,
//   twoshot-fused         out and residual all come from ccltuneMemAlloc (two-shot writes
//                         every rank's out and residual; pull reads the peers' inputs)
// For an all-reduce with an epilogue every other name means that all-reduce followed by
// the separate epilogue kernel, and runs where the plain all-reduce would.
//   nccl-net:…            NCCL's own call, when the process runs with those settings
//                         (libccltune-nccl sets them before NCCL's first init)
//   hier (allReduce)      the hierarchical all-reduce (issue 33) over the node team init
//                         built (peer memory of the node's ranks, a communicator per local
//                         rank): for plain and pooled buffers alike, because it never reads
//                         the call's buffers from a peer: each rank copies its input into
//                         its node scratch, the three phases run there, the result is
//                         copied out (two device copies, small beside the network phase);
//                         a message whose input and output do not fit the scratch
//                         (stagingBytes) runs the plain buffers' next choice
// Which buffers a choice needs (plain: any; pooled only; registered) is the shared rule of
// core/apply/any_buffer.h, the one the worker records beside each winner; this adds what
// this process can run.
// Not run here: forced NCCL algorithms/protocols (the tuner plugin applies those, and the
// runtime's NCCL calls get them when it is loaded), nccl-reg and nccl-symm (they need the
// application's buffers registered with NCCL), test choices.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/apply/choice_spec.h"
#include "core/apply/node_span.h"
#include "core/base/status.h"
#include "core/plan/problem.h"
#include "core/plan/types.h"

namespace ccltune::runtime {

// What this runtime instance can do; every rank holds the same values (agreed at init).
struct Capabilities {
  int world = 1;
  std::string peer_problem = "peer memory not set up";  // empty: our kernels can run
  // NCCL's process-level network settings (apply::kNetSettingsVars) as this process's
  // environment holds them at init (unset ones absent): NCCL read them at its first init,
  // so an `nccl-net` winner runs (as NCCL's own call) only where they are its settings.
  std::map<std::string, std::string> process_env;
  // How the ranks spread over NCCL's nodes, and whether the hierarchical all-reduce's node
  // team is up (empty) or why not (init.cc SetUpNodeTeam).
  apply::NodeSpan span;
  std::string hier_problem = "node team not set up";
};

// Plain: any device buffer of the application. Pooled: every buffer of the call (send and
// recv; with an epilogue input, out and residual) from ccltuneMemAlloc.
enum class BufferClass { kPlain, kPooled };

// The choice's name read as a ChoiceSpec, or why it cannot be read.
core::Result<apply::ChoiceSpec> ParseRuntimeChoice(const std::string& name);

// Empty when the runtime can run `spec` for `problem` over `cls` buffers; else why not.
std::string WhyNotRunnable(const apply::ChoiceSpec& spec, const core::Problem& problem,
                           const Capabilities& caps, BufferClass cls);

// One call as the application made it. `count` is core::ElementCount's (allReduce's
// elements, allGather's and reduceScatter's per rank).
struct CallShape {
  core::Op op = core::Op::kAllReduce;
  core::Dtype dtype = core::Dtype::kFp32;
  std::uint64_t count = 0;
  int world = 1;
  bool in_place = false;
  // A one-shot pull in place may hold its results in registers until every rank has read
  // (RuntimeConfig::hold_in_place, agreed by every rank at init).
  bool hold_in_place = false;
  // hier: the node team's ranks, and the scratch each rank holds for the call's input and
  // output (both copied through it).
  int ranks_per_node = 1;
  std::uint64_t hier_scratch_bytes = 0;
};

// The node scratch a hier call of `bytes` (the message) takes: input then output, each
// rounded up to kHierScratchAlignment.
inline constexpr std::uint64_t kHierScratchAlignment = 256;
std::uint64_t HierScratchBytes(std::uint64_t bytes);

// What the table's choice for the nearest tuned size cannot do for this exact call (its
// count, in place); empty when it can. Depends only on what every rank passes alike, so
// every rank falls back to NCCL together.
std::string WhyNotForCall(const apply::ChoiceSpec& spec, const CallShape& call, BufferClass cls);

}  // namespace ccltune::runtime
