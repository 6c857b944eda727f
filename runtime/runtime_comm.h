// The object behind ccltuneComm_t: one application communicator's dispatch table, peer
// memory (staging for our kernels and the ccltuneMemAlloc pool), communicators split off
// for `nccl:ctas=N` winners, the hierarchical all-reduce's node team when the ranks span
// nodes and it won somewhere, and the per-call dispatch. Thread-safe: one lock per call
// (host-side work only; nothing waits on the GPU under it).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/gpu/cuda_resources.h"
#include "core/gpu/peer_enqueue.h"
#include "core/gpu/peer_memory.h"
#include "core/plan/types.h"
#include "runtime/confirm/trial_rule.h"
#include "runtime/direct/direct_exchange.h"
#include "runtime/dispatch_table.h"
#include "runtime/failure_watch.h"
#include "runtime/nccl_directory.h"
#include "runtime/node_team_plan.h"
#include "runtime/pool_allocator.h"
#include "runtime/runtime_config.h"
#include "runtime/staging_plan.h"
#include "runtime/telemetry/call_timing.h"

namespace ccltune::runtime {

// One collective call as the C API received it. `dtype`/`redop` are empty when the NCCL
// type or op is not one ccltune tunes (the call then goes to NCCL as it is).
struct Call {
  core::Op op = core::Op::kAllReduce;
  std::optional<core::Dtype> dtype;
  std::optional<core::RedOp> redop;  // kNone for allGather
  ncclDataType_t nccl_type = ncclFloat32;
  ncclRedOp_t nccl_op = ncclSum;
  const void* send = nullptr;
  void* recv = nullptr;
  std::uint64_t count = 0;  // NCCL's: allGather sendcount, reduceScatter recvcount
  cudaStream_t stream = nullptr;
  // A group of one process's ranks (libccltune-nccl, group_calls.h): every rank's buffers
  // of this same collective, by rank, each in memory this rank's device reaches directly.
  // When set on a one-process communicator the call counts as pooled: the pull kernels read
  // and write the peers' own buffers.
  const void* const* peer_send = nullptr;
  void* const* peer_recv = nullptr;
};

// Elements of a call's send and receive buffers over `world` ranks (NCCL's count is
// allGather's sendcount and reduceScatter's recvcount).
inline std::uint64_t SendElems(core::Op op, std::uint64_t count, int world) {
  return op == core::Op::kReduceScatter ? count * static_cast<std::uint64_t>(world) : count;
}
inline std::uint64_t RecvElems(core::Op op, std::uint64_t count, int world) {
  return op == core::Op::kAllGather ? count * static_cast<std::uint64_t>(world) : count;
}
// A staged call's copy into or out of its peer-memory region (dispatch_staged.cc): one
// device-to-device copy on the call's stream; none when bytes is 0.
struct PeerCopy {
  void* to = nullptr;
  const void* from = nullptr;
  std::uint64_t bytes = 0;
};

// The whole message, as records count it (allGather's and reduceScatter's total).
inline std::uint64_t RecordBytes(const Call& c, int world) {
  return (c.op == core::Op::kAllReduce ? c.count : c.count * static_cast<std::uint64_t>(world)) *
         core::DtypeSize(*c.dtype);
}

// One all-reduce + epilogue call (ccltuneAllReduceResidualRmsNorm / Bias), arguments
// checked (epilogue_call.h): input is tokens x epilogue.hidden elements.
struct EpilogueCall {
  core::Epilogue epilogue;
  core::Dtype dtype = core::Dtype::kBf16;
  ncclDataType_t nccl_type = ncclBfloat16;
  const void* input = nullptr;
  void* residual = nullptr;      // residualRmsNorm only
  const void* weight = nullptr;  // RMSNorm's weight or the bias
  void* out = nullptr;           // may be input
  std::uint64_t tokens = 0;
  cudaStream_t stream = nullptr;
};

class RuntimeComm {
 public:
  // Collective over `nccl`'s ranks (init.cc).
  static core::Result<std::unique_ptr<RuntimeComm>> Init(ncclComm_t nccl, RuntimeConfig config);
  // Collective: waits (bounded) until every rank reached it, so no peer still reads our
  // memory when it is freed. On Timeout *abandoned is set: the caller must leak this object
  // (a helper thread may still be in NCCL with it), not delete it.
  core::Status Finish(bool* abandoned);
  // Finish, then free `comm`, or leak it when Finish was abandoned or failed (a peer may
  // still map its memory, a helper thread may still use it). The one rule for every owner:
  // ccltuneCommDestroy and libccltune-nccl's teardowns. A communicator whose ranks all live
  // in this process never waits for its peers (they destroy one after another, from one
  // thread): it is parked, and the last rank's Close frees the clique (teardown.cc).
  static core::Status Close(std::unique_ptr<RuntimeComm> comm);
  // The application aborts the communicator: the communicators split off it (ctas, the
  // node team's) are aborted too (not destroyed, which could wait for peers that are gone), and
  // `comm` is freed, or leaked when peers of this process may still run kernels on its memory.
  static void Drop(std::unique_ptr<RuntimeComm> comm);
  // Every rank of this communicator is a thread (or device) of this process.
  bool OneProcess() const { return processes_ == 1 && world_ > 1; }
  // "one process" or "N processes": the mode the summaries and check-nccl name.
  std::string Mode() const;
  // The key every rank of this communicator agreed on at init, unique in the node while the
  // communicator lives; and each rank's CUDA device (meaningful in one process), by rank.
  const std::string& clique() const { return clique_; }
  const std::vector<int>& devices() const { return devices_; }
  int rank() const { return rank_; }
  std::chrono::milliseconds timeout() const { return config_.timeout; }
  int world() const { return world_; }
  ~RuntimeComm();
  RuntimeComm(const RuntimeComm&) = delete;
  RuntimeComm& operator=(const RuntimeComm&) = delete;

  // Enqueues the call on its stream (dispatch.cc).
  core::Status Run(const Call& call);
  // What Serve did with a call: ran a choice other than NCCL's own, or left NCCL's own
  // call to the caller (libccltune-nccl then makes the application's call unchanged).
  // Why a call NCCL runs because its signature found no staging left (forwarded, not served).
  static constexpr std::string_view kStagingFull = "staging area full";
  // A call an in-program trial ran on NCCL's own, timed (confirm/trial_rule.h), and why a
  // size whose trial found its choice slower than NCCL's own is NCCL's from then on.
  static constexpr std::string_view kTrialNccl = "nccl (in-program trial)";
  static constexpr std::string_view kSlowerHere = "slower in this program";
  // Why a call whose op, type and reduction were never tuned (no record at any size) is NCCL's
  // own: apart from a tuned size whose winner is NCCL's, so a program shows what to tune.
  static constexpr std::string_view kNoRecords = "no records for its op, type and reduction";
  struct Served {
    bool ran = false;
    // The choice that ran, or why NCCL's own call is the one to make: a view of this
    // object's table or of a literal, valid while this object lives (no copy per call).
    std::string_view what;
    // Not ran because the in-program trial found the choice slower here (`what`: its line).
    bool slower_here = false;
  };
  // Run, except that NCCL's own call is not made here.
  core::Result<Served> Serve(const Call& call);
  // The choice Serve would run for `call` when it is one of our kernels (nothing of NCCL's;
  // such calls can be served from one thread for several ranks, outside NCCL's group), else
  // empty. A view of the table, valid while this object lives.
  std::string_view OwnKernelFor(const Call& call) const;
  // Whether handing `call` every rank's buffers (Call::peer_send) would change its choice:
  // only then is it worth asking the driver whether the peers reach them.
  bool GroupBuffersChangeChoice(const Call& call) const;
  // True when no tuned size of any slice is left (nothing to run but NCCL).
  bool Empty() const { return table_.size() == 0; }
  // Init's summary (fingerprint, winners or why none, table, peer memory).
  const std::string& summary() const { return summary_; }
  // The communicator's nodes as NCCL counts them (the fingerprint's `nodes`).
  int nodes() const { return nodes_; }
  // Enqueues an all-reduce + epilogue on its stream (dispatch_epilogue.cc).
  core::Status RunEpilogue(const EpilogueCall& call);
  // The choice a call of `bytes` would run (ccltuneGetChoice; with an epilogue,
  // ccltuneGetEpilogueChoice).
  std::string ChoiceFor(core::Op op, core::Dtype dtype, core::RedOp redop, std::uint64_t bytes,
                        bool pooled, const core::Epilogue& epilogue = {}) const;
  core::Result<void*> MemAlloc(std::size_t bytes);
  core::Status MemFree(void* ptr);
  // Timeout once one of our kernels gave up waiting for a peer (it then trapped: the GPU
  // context has failed), with FailureMessage's text; checked now, not only by the watch.
  core::Status AsyncError() const;
  // The same failure, readable without this object's lock and after it is gone; null when
  // our kernels cannot run here (nothing of ours can fail so).
  std::shared_ptr<const CommFailure> failure() const {
    return watch_ ? watch_->failure() : nullptr;
  }

 private:
  RuntimeComm(ncclComm_t nccl, RuntimeConfig config) : nccl_(nccl), config_(std::move(config)) {}

  // init.cc: the steps of Init, in order.
  core::Status Identify();
  core::Status Collective(core::Deadline deadline);
  core::Result<int> CountNodes(core::Deadline deadline);
  core::Status CountProcesses(core::Deadline deadline);
  // `mine`: this communicator's fingerprint inputs (null when the fingerprint is pinned), to
  // name what differs from the cache's fingerprints when none matches.
  core::Result<std::vector<apply::WinnerRecord>> LoadRecords(const std::string& fingerprint,
                                                             const nlohmann::json& mine);
  // The records, or none with the reason in *note (the summary line carries it).
  std::vector<apply::WinnerRecord> LoadRecordsOrNote(const std::string& fingerprint, int nodes,
                                                     std::string* note);
  core::Status SetUpPeers(core::Deadline deadline);
  core::Status SetUpLocalPool();
  char* PoolBase() const;
  core::Status AgreeOnTable(core::Deadline deadline);
  core::Status SplitCtasComms();
  // A blocking communicator split off the application's (every rank calls it in the same
  // order); `ctas` > 0 pins minCTAs = maxCTAs.
  core::Result<ncclComm_t> SplitBlocking(int color, int key, int ctas);
  // node_team.cc: the hierarchical all-reduce's node team, when `plan` allows it and the
  // agreed table applies hier; any problem becomes caps_.hier_problem (the summary's reason)
  // and the table is rebuilt without hier on every rank alike.
  core::Status SetUpNodeTeam(const NodeTeamPlan& plan,
                             const std::vector<apply::WinnerRecord>& records,
                             core::Deadline deadline);
  core::Status BuildNodeTeam(core::Deadline deadline);
  void AbortNodeTeam();
  bool HierOn() const { return caps_.hier_problem.empty(); }
  // The node scratch each rank holds for a hier call's input and output (0: no node team).
  std::uint64_t HierScratch() const { return HierOn() ? config_.staging_bytes : 0; }
  void LogSummary(const std::string& fingerprint, const std::string& records_note);
  void AbortChildren();

  // dispatch.cc
  struct Chosen {
    const AppliedRun* run = nullptr;  // none: NCCL's own call, for `why`
    std::string_view why;
    BufferClass cls = BufferClass::kPlain;
    std::size_t send_off = 0, recv_off = 0;
    bool direct = false;  // the entry's direct run on the program's buffers (DirectCapture)
    // Plain buffers' runner-up (TableEntry::plain_next) where `run` is the entry's plain run
    // and the runner-up can run this call too (its count and type decide); else none. What an
    // in-program trial tries next, and what runs where the choice finds no staging.
    const AppliedRun* next = nullptr;
    Chosen& Not(std::string_view reason) {
      run = nullptr;
      why = reason;
      return *this;
    }
  };
  Chosen Choose(const Call& call) const;
  // Serve's last step: runs `c` (not NCCL's own), or says NCCL must (staging full).
  core::Result<Served> ServeChosen(const Call& call, const Chosen& c);
  // dispatch_confirm.cc: the in-program trial of each tuned size's choice for a program's own
  // buffers, eager (confirm/trial_rule.h), keyed by the entry's plain run.
  struct Trial {
    int calls = 0;  // timed calls so far, every arm
    // The choice, then its runner-up where the first call could run it (the same on every
    // rank: the agreed table and the call decide); the runner-up alone once the choice found
    // no staging.
    std::vector<const AppliedRun*> candidates;
    std::vector<std::vector<gpu::Event>> events;  // per arm, NCCL's own last: start and end
    std::optional<TrialVerdict> verdict;          // once the ranks agreed
    // Decided against both: NCCL's own runs that size from then on.
    bool Lost() const { return verdict && !verdict->keep(); }
  };
  // Ranks one per process, more than one: where a trial can run at all.
  bool TrialApplies() const;
  // The call is one a trial times or judges: the setting is on, ranks are one per process, the
  // choice is plain buffers' eager one and not NCCL's own, and the stream is not captured.
  bool InTrial(const Call& call, const Chosen& c) const;
  core::Result<Served> ServeTrial(const Call& call, const Chosen& c);
  core::Result<Served> TimeTrialCall(const Call& call, const Chosen& c, Trial& t, int arm);
  // The trial starts again with candidate `keep` alone (alike on every rank): 0 drops the
  // runner-up, which this call cannot run or which found no staging; 1 drops the choice,
  // which found no staging, and the runner-up becomes the first arm. This call runs untimed
  // (ServeChosen: the choice, or its runner-up where the choice finds no staging).
  core::Result<Served> RestartTrial(const Call& call, const Chosen& c, Trial& t, int keep);
  core::Status DecideTrial(Trial& t, const Call& call);
  core::Status AgreeOnConfirm(core::Deadline deadline);
  std::string TrialNote() const;
  // The call carries every rank's buffers and they can be used as they are.
  bool GroupBuffers(const Call& call) const;
  BufferClass ClassOf(const Call& call, std::uint64_t send_bytes, std::uint64_t recv_bytes,
                      std::size_t* send_off, std::size_t* recv_off) const;
  // The offset of [p, p + bytes) in the shared pool when a live ccltuneMemAlloc block holds
  // it; nullopt otherwise (or when the pool is not shared).
  std::optional<std::size_t> PoolOffset(const void* p, std::uint64_t bytes) const;
  // Runs `run` (not fused) for `call`, checked against it already.
  // The *Run* functions that may find no staging left return whether they enqueued the call
  // (false: nothing was, the caller runs NCCL).
  // `direct`: the entry's direct run on the program's buffers (Chosen::direct), through RunStaged.
  core::Result<bool> RunChoice(const Call& call, const AppliedRun& run, BufferClass cls,
                               std::size_t send_off, std::size_t recv_off, bool direct = false);
  core::Status RunNccl(const Call& call, ncclComm_t comm);
  core::Status RunRsAg(const Call& call, const gpu::OpShape& shape);
  // dispatch_hier.cc
  core::Status RunHier(const Call& call, const AppliedRun& run);
  core::Result<bool> RunPeer(const Call& call, const AppliedRun& run, const gpu::OpShape& shape,
                             BufferClass cls, std::size_t send_off, std::size_t recv_off,
                             bool direct);
  // The staging a launch uses (staging_plan.h): the signature's own partition, or with
  // `shared` (a pull-mode staged launch) the partition all of those share. *fits false: none
  // left, NCCL runs the call.
  core::Result<std::size_t> StagingFor(const std::string& signature, std::uint64_t bytes,
                                       cudaStream_t stream, bool* fits, bool shared = false);
  // The one timed launch of `run` with `ops`, ordered among our kernels, with the copies a
  // staged call makes around it inside that order.
  core::Status LaunchPeer(const Call& call, const AppliedRun& run, const gpu::OpShape& shape,
                          const std::string& signature, const kernels::PeerOperands& ops,
                          const PeerCopy& in = {}, const PeerCopy& out = {});
  // dispatch_staged.cc: `run` with staged=1, on any buffers of the call; `direct`: Choose
  // found direct mode runs it (Chosen::direct), so the call takes a slot when captured.
  core::Result<bool> RunStaged(const Call& call, const AppliedRun& run, const gpu::OpShape& shape,
                               const std::string& signature, bool direct);
  core::Status OrderPeerLaunch(cudaStream_t stream, bool before);
  // dispatch_epilogue.cc
  struct EpilogueOffsets {
    std::size_t in = 0, out = 0, residual = 0;
  };
  BufferClass EpilogueClassOf(const EpilogueCall& call, EpilogueOffsets* at) const;
  // `all_reduce`: the call's all-reduce half (AllReduceOf). `direct`: it runs on the tensors in
  // direct mode (RunEpilogue asked, as Choose asks for a plain call).
  core::Status RunUnfused(const EpilogueCall& call, const Call& all_reduce, const AppliedRun& run,
                          BufferClass cls, const EpilogueOffsets& at, bool direct);
  core::Status RunFused(const EpilogueCall& call, const AppliedRun& run, const EpilogueOffsets& at);
  const gpu::PeerEnqueuer* EnqueuerFor(const std::string& key, const apply::ChoiceSpec& spec,
                                       const gpu::OpShape& shape);
  std::uint64_t KernelTimeoutNs() const;
  // Every team the runtime launches: bounded by the timeout, fail-stop (peer_sync.cuh);
  // `memory`'s ranks (peers_ when not named: every rank of one node).
  kernels::PeerTeam KernelTeam() const { return KernelTeam(*peers_); }
  kernels::PeerTeam KernelTeam(const gpu::PeerMemory& memory) const;
  // KernelTeam, timed (issue 45) when telemetry is on: the one launch of a call, never the
  // barriers around or before it. Under mu_.
  kernels::PeerTeam TimedTeam(const std::string& signature, core::Op op, core::Dtype dtype,
                              std::uint64_t bytes, std::string_view choice);
  void StartFailureWatch();
  void StartTelemetry();
  // Direct mode (dispatch_staged.cc): captured all-reduces on the program's own buffers.
  core::Status StartDirect(core::Deadline deadline);
  core::Status AgreeOnHold(core::Deadline deadline);
  std::string DirectProblem(const std::string& token);
  bool DirectCapture(const Call& call) const;
  bool Directable(const AppliedRun& run, const Call& call) const;
  // The first of `runs` direct mode runs on a captured call's own buffers (Directable, and
  // its staged form allowed for this exact call), or null. The one rule of plain calls and
  // of epilogues' all-reduces; the caller asked DirectCapture first.
  const AppliedRun* FirstDirectable(const Call& call, const CallShape& shape,
                                    std::initializer_list<const AppliedRun*> runs) const;
  // A captured call's slot of the direct exchange (direct_exchange.h), or null; only for a
  // call Choose found direct (so the capture is not asked about twice).
  const void* DirectSlotFor(const Call& call, const AppliedRun& run);

  ncclComm_t nccl_;
  RuntimeConfig config_;
  int rank_ = 0;
  int world_ = 1;
  int device_ = 0;
  int nccl_version_ = 0;
  int processes_ = 1;                   // distinct processes among the ranks
  int nodes_ = 1;                       // NCCL's node count, by its own rule (CountNodes)
  std::vector<std::string> node_keys_;  // each rank's node as NCCL groups it (CountNodes)
  std::string clique_;        // the key every rank agreed on (rank 0's process token and address)
  std::vector<int> devices_;  // each rank's CUDA device, by rank
  gpu::Stream stream_;        // init's exchanges
  std::unique_ptr<NcclDirectory> dir_;
  std::unique_ptr<gpu::PeerMemory> peers_;
  // The node team (node_team.cc): this rank's place, the node's ranks (node_comm_, whose
  // directory serves the node's exchanges without waiting on another node), the ranks of
  // this local rank on every node (across_comm_: hier's NCCL phase), and the node's peer
  // memory, all of it the scratch the hier calls copy through.
  core::RankPlace place_;
  ncclComm_t node_comm_ = nullptr;
  ncclComm_t across_comm_ = nullptr;
  std::unique_ptr<NcclDirectory> node_dir_;  // before node_peers_, which uses it
  std::unique_ptr<gpu::PeerMemory> node_peers_;
  // Reads peers_'s or node_peers_'s timed-out words: declared after both, so destroyed
  // (stopped) first.
  std::unique_ptr<FailureWatch> watch_;
  Capabilities caps_;
  DispatchTable table_;
  std::map<int, ncclComm_t> ctas_comms_;
  std::map<const AppliedRun*, Trial> trials_;  // under mu_
  std::string confirm_problem_;  // why no trial runs though the setting asked (the summary)

  mutable std::mutex mu_;
  // The ccltuneMemAlloc pool: in peer memory after the staging area when our kernels can
  // run (pool_shared_), else ordinary device memory, so an application that allocates from
  // it runs unchanged where peer memory cannot be had (its buffers then count as plain).
  std::optional<PoolAllocator> pool_;
  bool pool_shared_ = false;
  gpu::DeviceBuffer local_pool_;
  StagingPlan staging_{config_.staging_bytes, kMaxStagingSignatures};  // after config_
  // A direct slot no rank vouches for: staged pull all-reduces copy inside their launch with
  // it (apply::StagesInKernel). Made with the peer memory, since nothing may be allocated
  // while a program captures.
  gpu::DeviceBuffer unvouched_slot_;
  std::map<std::string, std::unique_ptr<gpu::PeerEnqueuer>> enqueuers_;
  gpu::Event peer_done_;  // the last eager peer launch, for ordering across streams
  cudaStream_t last_peer_stream_ = nullptr;
  bool logged_staging_full_ = false;
  std::string summary_;
  // Program telemetry (issue 45): null when off. Last: stopped (its thread joined) first.
  std::unique_ptr<CallTiming> timing_;
  // Multi-process cliques: captured calls on the program's own buffers (issue 43).
  std::unique_ptr<direct::DirectExchange> direct_;
  std::string direct_problem_;  // the first rank's reason for no direct mode (empty: on)
};

// The device of the communicator current while a call runs; the caller's is restored.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace ccltune::runtime
