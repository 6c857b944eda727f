// The per-rank state the NcclBackend and its prepared choices share: the GPU, one stream,
// the communicators (default + one per `ctas` value), the tuner handle and the spin-abort
// flag. Every wait here is bounded and, when it fails (timeout, cancellation, a NCCL
// error), aborts every communicator at once so no kernel stays stuck and later frees or
// frees of buffers cannot block. Used from one thread.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/base/status.h"
#include "core/node/node_name.h"
#include "core/peers/team_directory.h"
#include "worker/deadline.h"
#include "worker/nccl/choice_catalog.h"
#include "worker/nccl/communicator.h"
#include "worker/nccl/gpu_names.h"
#include "worker/nccl/tuner_control.h"
#include "worker/rendezvous/peer_directory.h"

namespace ccltune::worker::nccl {

class Runtime {
 public:
  Runtime(int rank, int world, int device, PeerDirectory& dir, const CancelToken& cancel)
      : rank_(rank), world_(world), device_(device), dir_(dir), cancel_(cancel) {}

  // Stream, flags, L2 size, tuner; then the default communicator of epoch 0 and the peer
  // memory probe (CCLTUNE_PEER_MEMORY=0 turns peer memory off).
  core::Status Start(std::optional<TunerControl> tuner, Deadline deadline);
  // Rank 0 makes a ncclUniqueId, the PeerDirectory spreads it as "nccl-uid-<epoch>".
  core::Status InitDefaultComm(int epoch, Deadline deadline);
  // Drops every communicator (aborting them), waits for the stream to drain, rebuilds.
  core::Status Recover(int epoch, Deadline deadline);

  // The communicator a choice runs on; `ctas` ones are split off lazily and cached.
  core::Result<std::shared_ptr<Communicator>> CommFor(const ChoiceSpec& spec, Deadline deadline);
  // A blocking twin of CommFor(spec) (same ctas), split off lazily and cached, for the eager
  // host rounds: a program's communicator is blocking, and a non-blocking one starts a thread
  // per call, which would bury the host cost those rounds measure. Its first call of a kind
  // connects peers and may block: make it under gpu::RunBounded.
  core::Result<std::shared_ptr<Communicator>> BlockingCommFor(const ChoiceSpec& spec,
                                                              Deadline deadline);
  // After a bounded call on a blocking twin was abandoned (its thread still in NCCL): the
  // twins are leaked, never aborted or destroyed under that thread.
  void AbandonBlockingComms();

  // The hierarchical all-reduce's parts (issue 33), for ranks that span nodes of equal rank
  // counts (`place` from core::PlaceOfRank, the same node layout on every rank): the node's
  // peer memory, over a directory namespace of its own (node_peers()->problem() says when it
  // cannot serve), and the communicator of the ranks with this local rank (AcrossNodes).
  // Collective over every rank, once, after Start.
  core::Status StartNodeTeam(const core::RankPlace& place, Deadline deadline);
  // Null until StartNodeTeam.
  PeerMemory* node_peers() const { return node_peers_.get(); }
  int local_rank() const { return place_.local_rank; }
  // The split of the default communicator by local rank, keyed by node. Made by
  // StartNodeTeam and again after a Recover (collective: every rank prepares the same choice).
  core::Result<std::shared_ptr<Communicator>> AcrossNodes(Deadline deadline);

  // Waits until the last enqueue on `comm` left ncclInProgress.
  core::Status WaitEnqueued(Communicator& comm, Deadline deadline, const std::string& what);
  // Waits until `event` completed (nullptr: the whole stream), watching every communicator.
  core::Status WaitGpu(cudaEvent_t event, Deadline deadline, const std::string& what);
  // Aborts every communicator and releases bounded-spin kernels. Idempotent.
  void AbortAll();

  // A 1-element allReduce on the default communicator, enqueued (not waited for): placed
  // right before a start event it aligns the ranks on the GPU itself, so host-side skew
  // between ranks does not enter the first rank's measurement.
  core::Status EnqueueDeviceBarrier(Deadline deadline);
  // The gate: a bounded spin kernel that holds the stream until ReleaseGate(), so all of a
  // round's launches are queued before the GPU runs them and the host's launch latency
  // (a thread per call on a non-blocking communicator) stays out of the timing.
  core::Status LaunchGate(double bound_seconds);
  void ReleaseGate();
  bool GateTimedOut() const;

  int rank() const { return rank_; }
  int world() const { return world_; }
  int device() const { return device_; }
  cudaStream_t stream() const { return stream_.get(); }
  const CancelToken& cancel() const { return cancel_; }
  const TunerControl* tuner() const { return tuner_ ? &*tuner_ : nullptr; }
  Communicator& default_comm() const { return *default_comm_; }
  std::size_t l2_bytes() const { return l2_bytes_; }
  // False under CCLTUNE_BUFFER_ROTATION=0: every choice measures from one buffer set.
  bool rotate_buffers() const { return rotate_buffers_; }
  int nccl_version() const { return nccl_version_; }
  // Never null after Start; problem() says when peer kernels cannot run here.
  PeerMemory* peers() const { return peers_.get(); }
  // Host-mapped ints: [0] spin abort flag (kernels read), [1] spin timed-out (kernels
  // write), [2] gate release, [3] gate timed-out.
  int* spin_flags_host() const { return static_cast<int*>(spin_flags_.host()); }
  int* spin_flags_device() const { return static_cast<int*>(spin_flags_.device()); }

 private:
  core::Status Fail(core::Status status);
  volatile int* flags() const { return static_cast<volatile int*>(spin_flags_.host()); }
  static constexpr int kFlagCount = 4;

  int rank_;
  int world_;
  int device_;
  PeerDirectory& dir_;
  const CancelToken& cancel_;
  Stream stream_;
  MappedHost spin_flags_;
  DeviceBuffer barrier_word_;
  std::optional<TunerControl> tuner_;
  std::shared_ptr<Communicator> default_comm_;
  std::map<int, std::shared_ptr<Communicator>> ctas_comms_;
  std::map<int, std::shared_ptr<Communicator>> blocking_comms_;  // by ctas, 0: the default's
  core::RankPlace place_;
  std::unique_ptr<core::TeamDirectory> node_dir_;  // before node_peers_, which uses it
  std::unique_ptr<PeerMemory> node_peers_;
  std::shared_ptr<Communicator> across_nodes_;
  std::size_t l2_bytes_ = 50u << 20;
  bool rotate_buffers_ = true;
  int nccl_version_ = 0;
  std::unique_ptr<PeerMemory> peers_;
};

}  // namespace ccltune::worker::nccl
