// RuntimeComm::Init and its steps (runtime_comm.h): identify the communicator, count the
// nodes, compute the fingerprint, load its winners, set up peer memory, build the table,
// agree on it, build the node team when it applies hier (node_team.cc), split the
// communicators the table needs, say in one line what came of it.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>

#include "core/apply/node_span.h"
#include "core/apply/winner_loader.h"
#include "core/gpu/cuda_check.h"
#include "core/gpu/fingerprint_probe.h"
#include "core/gpu/nccl_api.h"
#include "core/gpu/peer_memory.h"
#include "core/node/fingerprint_gap.h"
#include "core/node/node_name.h"
#include "runtime/runtime_comm.h"
#include "runtime/runtime_note.h"
#include "runtime/waits.h"

namespace ccltune::runtime {

DeviceGuard::DeviceGuard(int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  if (previous_ != device) (void)cudaSetDevice(device);
  (void)cudaGetLastError();
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) (void)cudaSetDevice(previous_);
}

core::Result<std::unique_ptr<RuntimeComm>> RuntimeComm::Init(ncclComm_t nccl,
                                                             RuntimeConfig config) {
  if (nccl == nullptr) return core::InvalidArgument("comm: the NCCL communicator is NULL");
  std::unique_ptr<RuntimeComm> c(new RuntimeComm(nccl, std::move(config)));
  CCLTUNE_RETURN_IF_ERROR(c->Identify());
  DeviceGuard guard(c->device_);
  CCLTUNE_ASSIGN_OR_RETURN(c->stream_, gpu::Stream::Create());
  c->dir_ = std::make_unique<NcclDirectory>(nccl, c->rank_, c->world_, c->stream_.get());
  const core::Deadline deadline = core::Clock::now() + c->config_.timeout;
  bool abandoned = false;
  // The grace second lets the steps' own deadline report first when they can.
  const core::Status st =
      RunBounded([raw = c.get(), deadline] { return raw->Collective(deadline); },
                 deadline + std::chrono::seconds(1), &abandoned);
  if (abandoned) (void)c.release();  // its thread still uses it: leaked, never freed under it
  CCLTUNE_RETURN_IF_ERROR(st);
  c->StartFailureWatch();
  c->StartTelemetry();
  return c;
}

// With CCLTUNE_TELEMETRY on: the ring our kernels time themselves into, and what each tuned
// size runs with its tuned time, beside what the program's calls then take.
void RuntimeComm::StartTelemetry() {
  const TelemetryApi* api = Telemetry();
  if (api == nullptr) return;
  timing_ = CallTiming::Start(*api, {CommHash(clique_), rank_, world_, device_});
  table_.ForEachEntry([this](const SliceKey& key, const TableEntry& e) {
    const auto& [op, dtype, redop, kind, hidden] = key;
    if (kind != core::EpilogueKind::kNone) return;  // the fused sites are keyed by tokens
    timing_->Tuned(op, dtype, e.bytes, e.plain.name, e.plain.time_us * 1e-6);
    if (e.pooled.name != e.plain.name)
      timing_->Tuned(op, dtype, e.bytes, e.pooled.name, e.pooled.time_us * 1e-6);
    if (e.direct.name != e.plain.name && e.direct.name != e.pooled.name)
      timing_->Tuned(op, dtype, e.bytes, e.direct.name, e.direct.time_us * 1e-6);
  });
}

// Only where our kernels can run: nothing else of ours stops the context. They run on one
// team: every rank's peer memory (one node), or the node team's (hier; ranks spanning nodes
// never have the former), whose ranks are local ranks, named here by their rank in the job.
void RuntimeComm::StartFailureWatch() {
  const bool node_team = peers_ == nullptr || !peers_->usable();
  if (node_team && !(HierOn() && node_peers_ != nullptr)) return;
  char comm[32];
  std::snprintf(comm, sizeof comm, "%p", static_cast<void*>(nccl_));
  const gpu::PeerMemory* peers = node_team ? node_peers_.get() : peers_.get();
  std::vector<int> job_rank;  // by team rank; empty: the same
  if (node_team) job_rank = place_.node_ranks;
  watch_ = std::make_unique<FailureWatch>(
      [peers, job_rank](std::vector<int>* missing) {
        if (!peers->TimedOut()) return false;
        *missing = peers->MissingRanks();
        if (!job_rank.empty()) {
          for (int& r : *missing) r = job_rank.at(static_cast<std::size_t>(r));
        }
        return true;
      },
      FailureContext{comm, rank_, world_, config_.timeout});
}

// The collective steps of Init; on the helper thread of RunBounded.
core::Status RuntimeComm::Collective(core::Deadline deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(nodes_, CountNodes(deadline));
  CCLTUNE_RETURN_IF_ERROR(CountProcesses(deadline));
  CCLTUNE_ASSIGN_OR_RETURN(
      const std::string fp,
      gpu::CommunicatorFingerprint(world_, nodes_, nccl_version_, config_.fingerprint,
                                   config_.fingerprint_source));
  std::string note;
  std::vector<apply::WinnerRecord> records = LoadRecordsOrNote(fp, nodes_, &note);
  CCLTUNE_RETURN_IF_ERROR(SetUpPeers(deadline));
  caps_.world = world_;
  caps_.process_env = apply::NetSettingsInEnvironment();
  const NodeTeamPlan plan = PlanNodeTeam(node_keys_, rank_, config_.peer_memory);
  caps_.span = plan.span;
  caps_.hier_problem = plan.why_not;  // empty: as if the team were up, until SetUpNodeTeam
  table_ = DispatchTable::Build(records, caps_);
  if (processes_ > 1 && processes_ < world_) {
    // Several ranks in some process, others elsewhere: the ranks of one process would
    // destroy one by one while a collective goodbye waits for all (see Close).
    note += "; not served: " + std::to_string(world_) + " ranks in " + std::to_string(processes_) +
            " processes (served are one rank per process, or every rank in one process)";
    table_ = DispatchTable{};
  }
  CCLTUNE_RETURN_IF_ERROR(AgreeOnTable(deadline));
  CCLTUNE_RETURN_IF_ERROR(SetUpNodeTeam(plan, records, deadline));
  CCLTUNE_RETURN_IF_ERROR(SplitCtasComms());
  CCLTUNE_RETURN_IF_ERROR(StartDirect(deadline));
  CCLTUNE_RETURN_IF_ERROR(AgreeOnConfirm(deadline));
  LogSummary(fp, note);
  return core::Status::Ok();
}

core::Status RuntimeComm::Identify() {
  CCLTUNE_NCCL_TRY(nccl_, gpu::Nccl().CommCount(nccl_, &world_));
  CCLTUNE_NCCL_TRY(nccl_, gpu::Nccl().CommUserRank(nccl_, &rank_));
  CCLTUNE_NCCL_TRY(nccl_, gpu::Nccl().CommCuDevice(nccl_, &device_));
  CCLTUNE_NCCL_TRY(nccl_, gpu::Nccl().GetVersion(&nccl_version_));
  return core::Status::Ok();
}

core::Result<int> RuntimeComm::CountNodes(core::Deadline deadline) {
  // NCCL has no API for its nNodes: count what it counts, the distinct keys it hashes
  // (core::NcclHostKey). The worker's NCCL_HOSTID is its node name, so the count equals the
  // worker's `nodes` for the same split, and the tuner plugin's (NCCL hands it nNodes).
  CCLTUNE_ASSIGN_OR_RETURN(node_keys_, dir_->AllGather("nccl-host", core::NcclHostKey(), deadline));
  return static_cast<int>(std::set<std::string>(node_keys_.begin(), node_keys_.end()).size());
}

// One exchange names the processes behind the ranks, each rank's device and, from rank 0's
// record, the clique (its process token and this object's address are unique while the
// clique lives).
core::Status RuntimeComm::CountProcesses(core::Deadline deadline) {
  char self[64];
  std::snprintf(self, sizeof self, " %p %d", static_cast<void*>(this), device_);
  CCLTUNE_ASSIGN_OR_RETURN(std::vector<std::string> ids,
                           dir_->AllGather("process", gpu::ProcessToken() + self, deadline));
  std::set<std::string> tokens;
  devices_.clear();
  for (const auto& id : ids) {
    tokens.insert(id.substr(0, id.find(' ')));
    devices_.push_back(std::atoi(id.substr(id.rfind(' ') + 1).c_str()));
  }
  processes_ = static_cast<int>(tokens.size());
  clique_ = ids[0];
  return core::Status::Ok();
}

std::string RuntimeComm::Mode() const {
  return processes_ == 1 ? "one process" : std::to_string(processes_) + " processes";
}

// Never fails init: a missing source, an unreachable cache or a bad file becomes the
// error whose message the summary line carries, and the table stays empty (NCCL).
core::Result<std::vector<apply::WinnerRecord>> RuntimeComm::LoadRecords(
    const std::string& fingerprint, const nlohmann::json& mine) {
  const auto deadline = std::chrono::steady_clock::now() + config_.source.load_timeout;
  core::Result<apply::ParsedFile> loaded =
      apply::LoadWinners(config_.source, fingerprint, deadline);
  if (!loaded.ok()) {
    if (loaded.status().code() == core::StatusCode::kNotFound) {
      return core::NotFound("no winners source (set CCLTUNE_RESULTS_FILE or CCLTUNE_REDIS_URL)");
    }
    return loaded.status().WithContext("winners not loaded");
  }
  if (loaded->records.empty()) {
    std::string why = "no winners for fingerprint " + fingerprint +
                      (loaded->rejected > 0 ? " (" + loaded->first_error + ")" : "");
    // "tuned with ncclVersion 2.28.3 where this process has 2.28.9", not just two hashes.
    const std::string gap =
        mine.is_null() ? "" : core::DescribeFingerprintGap(mine, loaded->other_fingerprints);
    return core::NotFound(gap.empty() ? why : why + ": " + gap);
  }
  return std::move(loaded->records);
}

std::vector<apply::WinnerRecord> RuntimeComm::LoadRecordsOrNote(const std::string& fingerprint,
                                                                int nodes, std::string* note) {
  const nlohmann::json mine =
      config_.fingerprint.empty()
          ? core::FingerprintJson(gpu::CommunicatorFingerprintInput(world_, nodes, nccl_version_))
          : nlohmann::json();
  core::Result<std::vector<apply::WinnerRecord>> records = LoadRecords(fingerprint, mine);
  if (records.ok()) {
    *note = std::to_string(records->size()) + " records";
    return std::move(records).value();
  }
  *note = records.status().message();
  if (records.status().code() == core::StatusCode::kNotFound && config_.fingerprint.empty()) {
    // What the fingerprint was made of, so a mismatch (another NCCL or driver than the one
    // tuned with) shows in the one line.
    *note += "; this communicator is " +
             core::CanonicalFingerprintJson(
                 gpu::CommunicatorFingerprintInput(world_, nodes, nccl_version_));
  }
  return {};
}

core::Status RuntimeComm::SetUpPeers(core::Deadline deadline) {
  // Orders eager launches of either peer team (the world's, or the node team's that hier
  // uses when peer memory across the world is off): made whether or not this team is up.
  CCLTUNE_ASSIGN_OR_RETURN(peer_done_, gpu::Event::CreateForOrdering());
  if (!config_.peer_memory) {
    peers_ =
        gpu::PeerMemory::Unavailable(rank_, world_, *dir_, "turned off (CCLTUNE_PEER_MEMORY=0)");
  } else {
    CCLTUNE_ASSIGN_OR_RETURN(peers_,
                             gpu::PeerMemory::Probe(rank_, world_, *dir_, stream_.get(), deadline));
  }
  caps_.peer_problem = peers_->problem();
  if (!peers_->usable()) return SetUpLocalPool();
  const core::Status reserved =
      peers_->Reserve(config_.staging_bytes + config_.pool_bytes, deadline);
  if (reserved.code() == core::StatusCode::kFailedPrecondition) {
    caps_.peer_problem = reserved.message();  // every rank saw the same verdict
    return SetUpLocalPool();
  }
  CCLTUNE_RETURN_IF_ERROR(reserved);
  if (config_.pool_bytes > 0) pool_.emplace(config_.pool_bytes);
  pool_shared_ = true;
  CCLTUNE_ASSIGN_OR_RETURN(unvouched_slot_, gpu::UnvouchedDirectSlot(stream_.get()));
  return WaitStream(stream_.get(), nccl_, deadline, "peer memory setup");
}

core::Status RuntimeComm::SetUpLocalPool() {
  if (config_.pool_bytes == 0) return core::Status::Ok();
  CCLTUNE_ASSIGN_OR_RETURN(local_pool_,
                           gpu::DeviceBuffer::Allocate(config_.pool_bytes, gpu::MemoryKind::kCuda));
  pool_.emplace(config_.pool_bytes);
  return core::Status::Ok();
}

char* RuntimeComm::PoolBase() const {
  return pool_shared_ ? static_cast<char*>(peers_->Data(rank_, config_.staging_bytes))
                      : static_cast<char*>(local_pool_.data());
}

// Every rank loaded on its own (the cache may change meanwhile, a load may time out on one
// rank only): ranks that disagree would run different kernels and wait on each other, so
// any difference makes every rank use NCCL.
core::Status RuntimeComm::AgreeOnTable(core::Deadline deadline) {
  const std::string mine = std::to_string(std::hash<std::string>{}(table_.Digest()));
  CCLTUNE_ASSIGN_OR_RETURN(std::vector<std::string> all, dir_->AllGather("table", mine, deadline));
  for (int r = 0; r < world_; ++r) {
    if (all[r] != all[0]) {
      Note("rank " + std::to_string(r) +
           " loaded other winners than rank 0 (the cache changed "
           "during init, or a load timed out on some ranks): NCCL for every call");
      table_ = DispatchTable{};
      break;
    }
  }
  return core::Status::Ok();
}

// Blocking children: by now every rank has proved present in the exchanges above, and a
// non-blocking communicator would cost a host thread per call.
core::Status RuntimeComm::SplitCtasComms() {
  for (int n : table_.CtasNeeded()) {
    CCLTUNE_ASSIGN_OR_RETURN(ctas_comms_[n], SplitBlocking(0, rank_, n));
  }
  return core::Status::Ok();
}

core::Result<ncclComm_t> RuntimeComm::SplitBlocking(int color, int key, int ctas) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 1;
  if (ctas > 0) {
    cfg.minCTAs = ctas;
    cfg.maxCTAs = ctas;
  }
  ncclComm_t child = nullptr;
  CCLTUNE_NCCL_TRY(nccl_, gpu::Nccl().CommSplit(nccl_, color, key, &child, &cfg));
  return child;
}

// The summary's word on the in-program trial: nothing when it was not asked for.
std::string RuntimeComm::TrialNote() const {
  if (!confirm_problem_.empty()) return "; " + confirm_problem_;
  if (config_.confirm_calls == 0) return "";
  if (!TrialApplies()) return "; no in-program trial (ranks share a process)";
  return "; in-program trial of " + std::to_string(config_.confirm_calls) +
         " calls an arm for plain buffers' eager choices (" + std::to_string(table_.RunnersUp()) +
         " sizes with a runner-up)";
}

void RuntimeComm::LogSummary(const std::string& fingerprint, const std::string& records_note) {
  std::string ctas;
  for (const auto& [n, comm] : ctas_comms_) ctas += (ctas.empty() ? "" : ",") + std::to_string(n);
  summary_ = "fingerprint " + fingerprint + " (" + std::to_string(nodes_) +
             (nodes_ == 1 ? " node" : " nodes") + "): " + records_note + "; ranks in " + Mode() +
             "; " + table_.Describe() + "; peer memory " +
             (caps_.peer_problem.empty() ? "on" : "off (" + caps_.peer_problem + ")") +
             (ctas.empty() ? "" : "; ctas communicators " + ctas) +
             (direct_ ? "; captured all-reduces on the program's buffers" : "") +
             (direct_ || processes_ < 2 ? "" : "; no direct mode (" + direct_problem_ + ")") +
             (nodes_ < 2 ? ""
              : HierOn() ? "; hierarchical all-reduce on (" + std::to_string(nodes_) + " nodes x " +
                               std::to_string(place_.node_ranks.size()) + " ranks)"
                         : "; hierarchical all-reduce off (" + caps_.hier_problem + ")") +
             TrialNote();
  if (rank_ == 0 && config_.log_summary) {
    Note("rank 0 of " + std::to_string(world_) + ", " + summary_);
  }
}

}  // namespace ccltune::runtime
