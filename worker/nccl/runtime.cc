// Shared per-rank NCCL state and its bounded waits (runtime.h).
#include "worker/nccl/runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/base/log.h"
#include "core/kernels/kernels.h"
#include "worker/env_switches.h"
#include "worker/nccl/gpu_names.h"

namespace ccltune::worker::nccl {
namespace {

core::Result<ncclUniqueId> UniqueIdFromHex(const std::string& hex) {
  ncclUniqueId id{};
  CCLTUNE_RETURN_IF_ERROR(UnhexBytes(hex, id.internal, sizeof(id.internal), "ncclUniqueId"));
  return id;
}

}  // namespace

core::Status Runtime::Start(std::optional<TunerControl> tuner, Deadline deadline) {
  tuner_ = std::move(tuner);
  CCLTUNE_CUDA_TRY(cudaSetDevice(device_));
  CCLTUNE_ASSIGN_OR_RETURN(stream_, Stream::Create());
  CCLTUNE_ASSIGN_OR_RETURN(spin_flags_, MappedHost::Allocate(kFlagCount * sizeof(int)));
  std::memset(spin_flags_.host(), 0, kFlagCount * sizeof(int));
  int l2 = 0;
  CCLTUNE_CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device_));
  if (l2 > 0) l2_bytes_ = static_cast<std::size_t>(l2);
  rotate_buffers_ = BufferRotationOn();
  CCLTUNE_NCCL_TRY(nullptr, ncclGetVersion(&nccl_version_));
  CCLTUNE_RETURN_IF_ERROR(InitDefaultComm(/*epoch=*/0, deadline));
  CCLTUNE_ASSIGN_OR_RETURN(const bool peers_wanted, PeerMemoryWanted(std::getenv(kPeerMemoryEnv)));
  if (!peers_wanted) {
    peers_ = PeerMemory::Unavailable(rank_, world_, dir_, "turned off by CCLTUNE_PEER_MEMORY=0");
  } else {
    CCLTUNE_ASSIGN_OR_RETURN(peers_, PeerMemory::Probe(rank_, world_, dir_, stream(), deadline));
  }
  if (!peers_->usable()) core::LogInfo("peer kernels skipped: " + peers_->problem());
  return core::Status::Ok();
}

core::Status Runtime::InitDefaultComm(int epoch, Deadline deadline) {
  const std::string name = "nccl-uid-" + std::to_string(epoch);
  std::optional<std::string> mine;
  if (rank_ == 0) {
    ncclUniqueId id;
    CCLTUNE_NCCL_TRY(nullptr, ncclGetUniqueId(&id));
    mine = HexBytes(id.internal, sizeof(id.internal));
  }
  CCLTUNE_ASSIGN_OR_RETURN(std::string hex, dir_.Broadcast(name, 0, mine, deadline));
  CCLTUNE_ASSIGN_OR_RETURN(ncclUniqueId id, UniqueIdFromHex(hex));
  CCLTUNE_ASSIGN_OR_RETURN(default_comm_,
                           Communicator::Init(world_, rank_, id, {}, deadline, cancel_));
  return core::Status::Ok();
}

core::Status Runtime::Recover(int epoch, Deadline deadline) {
  AbortAll();
  // Aborted NCCL kernels and released spins leave the stream soon; if it does not drain,
  // nothing later on it would be trustworthy.
  CCLTUNE_RETURN_IF_ERROR(PollUntil(
      [this]() -> core::Result<bool> {
        const cudaError_t e = cudaStreamQuery(stream_.get());
        if (e == cudaErrorNotReady) return false;
        CCLTUNE_CUDA_TRY(e);
        return true;
      },
      deadline, NeverCancel(), "recover: stream drain"));
  default_comm_.reset();
  ctas_comms_.clear();
  blocking_comms_.clear();
  across_nodes_.reset();  // split again by the next hier choice (AcrossNodes)
  for (int i = 0; i < kFlagCount; ++i) flags()[i] = 0;
  if (tuner_) tuner_->Clear();
  return InitDefaultComm(epoch, deadline).WithContext("recover epoch " + std::to_string(epoch));
}

core::Result<std::shared_ptr<Communicator>> Runtime::CommFor(const ChoiceSpec& spec,
                                                             Deadline deadline) {
  if (default_comm_ == nullptr || default_comm_->aborted()) {
    return core::FailedPrecondition("communicator aborted; Recover first");
  }
  if (spec.ctas <= 0) return default_comm_;
  auto it = ctas_comms_.find(spec.ctas);
  if (it != ctas_comms_.end()) return it->second;
  CommOptions options;
  options.ctas = spec.ctas;
  core::Result<std::shared_ptr<Communicator>> child =
      default_comm_->Split(/*color=*/0, rank_, options, deadline, cancel_);
  if (!child.ok())
    return Fail(child.status().WithContext("split ctas=" + std::to_string(spec.ctas)));
  ctas_comms_[spec.ctas] = child.value();
  return child;
}

core::Result<std::shared_ptr<Communicator>> Runtime::BlockingCommFor(const ChoiceSpec& spec,
                                                                     Deadline deadline) {
  const int ctas = std::max(spec.ctas, 0);
  auto it = blocking_comms_.find(ctas);
  if (it != blocking_comms_.end()) return it->second;
  if (default_comm_ == nullptr || default_comm_->aborted()) {
    return core::FailedPrecondition("communicator aborted; Recover first");
  }
  CommOptions options;
  options.ctas = ctas;
  options.blocking = true;
  core::Result<std::shared_ptr<Communicator>> child =
      default_comm_->Split(/*color=*/0, rank_, options, deadline, cancel_);
  if (!child.ok()) {
    return Fail(child.status().WithContext("split blocking ctas=" + std::to_string(ctas)));
  }
  blocking_comms_[ctas] = child.value();
  return child;
}

void Runtime::AbandonBlockingComms() {
  static auto* leaked = new std::vector<std::shared_ptr<Communicator>>;
  for (auto& [n, c] : blocking_comms_) leaked->push_back(std::move(c));
  blocking_comms_.clear();
}

core::Status Runtime::StartNodeTeam(const core::RankPlace& place, Deadline deadline) {
  place_ = place;
  node_dir_ = std::make_unique<core::TeamDirectory>(dir_, place.node_ranks, "node-team:");
  const int local = static_cast<int>(place.node_ranks.size());
  CCLTUNE_ASSIGN_OR_RETURN(const bool peers_wanted, PeerMemoryWanted(std::getenv(kPeerMemoryEnv)));
  if (!peers_wanted) {
    node_peers_ = PeerMemory::Unavailable(place.local_rank, local, *node_dir_,
                                          "turned off by CCLTUNE_PEER_MEMORY=0");
  } else {
    CCLTUNE_ASSIGN_OR_RETURN(
        node_peers_, PeerMemory::Probe(place.local_rank, local, *node_dir_, stream(), deadline));
  }
  // hier runs on every rank or on none (its NCCL phase spans the nodes): one node's problem
  // is every rank's.
  CCLTUNE_ASSIGN_OR_RETURN(
      std::string problem,
      core::FirstRankProblem(dir_, "node-team-ok", node_peers_->problem(), "node", deadline));
  if (!problem.empty()) {
    node_peers_ = PeerMemory::Unavailable(place.local_rank, local, *node_dir_, std::move(problem));
    core::LogInfo("hierarchical all-reduce skipped: " + node_peers_->problem());
    return core::Status::Ok();
  }
  return AcrossNodes(deadline).status();
}

core::Result<std::shared_ptr<Communicator>> Runtime::AcrossNodes(Deadline deadline) {
  if (default_comm_ == nullptr || default_comm_->aborted()) {
    return core::FailedPrecondition("communicator aborted; Recover first");
  }
  if (across_nodes_ != nullptr) return across_nodes_;
  core::Result<std::shared_ptr<Communicator>> child =
      default_comm_->Split(place_.local_rank, place_.node, {}, deadline, cancel_);
  if (!child.ok()) {
    return Fail(child.status().WithContext("split by local rank " +
                                           std::to_string(place_.local_rank) + " (hier)"));
  }
  across_nodes_ = child.value();
  return child;
}

core::Status Runtime::WaitEnqueued(Communicator& comm, Deadline deadline, const std::string& what) {
  core::Status st = comm.WaitReady(deadline, cancel_, what);
  return st.ok() ? st : Fail(std::move(st));
}

core::Status Runtime::WaitGpu(cudaEvent_t event, Deadline deadline, const std::string& what) {
  auto done = [&]() -> core::Result<bool> {
    const cudaError_t e = event ? cudaEventQuery(event) : cudaStreamQuery(stream_.get());
    if (e != cudaErrorNotReady) {
      CCLTUNE_CUDA_TRY(e);
      return true;
    }
    // A peer's failure surfaces as an async error while our kernel still waits for it.
    for (Communicator* c : {default_comm_.get()}) {
      if (c != nullptr) CCLTUNE_RETURN_IF_ERROR(c->Ready().status());
    }
    for (auto& [n, c] : ctas_comms_) CCLTUNE_RETURN_IF_ERROR(c->Ready().status());
    for (auto& [n, c] : blocking_comms_) CCLTUNE_RETURN_IF_ERROR(c->Ready().status());
    if (across_nodes_ != nullptr) CCLTUNE_RETURN_IF_ERROR(across_nodes_->Ready().status());
    return false;
  };
  core::Status st = PollUntil(done, deadline, cancel_, what);
  return st.ok() ? st : Fail(std::move(st));
}

void Runtime::AbortAll() {
  if (spin_flags_.host() != nullptr) {
    flags()[0] = 1;  // test-hang spins
    flags()[2] = 1;  // gates
  }
  if (default_comm_) default_comm_->Abort();
  for (auto& [n, c] : ctas_comms_) c->Abort();
  for (auto& [n, c] : blocking_comms_) c->Abort();
  if (across_nodes_) across_nodes_->Abort();
}

core::Status Runtime::EnqueueDeviceBarrier(Deadline deadline) {
  if (default_comm_ == nullptr || default_comm_->aborted()) {
    return core::FailedPrecondition("barrier: communicator aborted; Recover first");
  }
  if (barrier_word_.data() == nullptr) {
    CCLTUNE_ASSIGN_OR_RETURN(barrier_word_,
                             DeviceBuffer::Allocate(sizeof(float), MemoryKind::kCuda));
    CCLTUNE_CUDA_TRY(cudaMemsetAsync(barrier_word_.data(), 0, sizeof(float), stream_.get()));
  }
  float* word = static_cast<float*>(barrier_word_.data());
  ncclComm_t comm = default_comm_->get();
  CCLTUNE_NCCL_TRY(comm, ncclAllReduce(word, word, 1, ncclFloat32, ncclSum, comm, stream_.get()));
  return WaitEnqueued(*default_comm_, deadline, "device barrier enqueue");
}

core::Status Runtime::LaunchGate(double bound_seconds) {
  flags()[2] = 0;
  flags()[3] = 0;
  CCLTUNE_CUDA_TRY(kernels::LaunchBoundedSpin(spin_flags_device() + 2,
                                              static_cast<std::uint64_t>(bound_seconds * 1e9),
                                              spin_flags_device() + 3, stream_.get()));
  return core::Status::Ok();
}

void Runtime::ReleaseGate() { flags()[2] = 1; }

bool Runtime::GateTimedOut() const { return flags()[3] != 0; }

core::Status Runtime::Fail(core::Status status) {
  core::LogWarn("rank " + std::to_string(rank_) + ": " + status.ToString() +
                "; aborting communicators");
  AbortAll();
  return status;
}

}  // namespace ccltune::worker::nccl
