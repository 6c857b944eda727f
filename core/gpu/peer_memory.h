// Peer memory for the ranks of one node (issue 6): device memory each rank exports with
// CUDA IPC and every other rank maps, handles exchanged through the Redis rendezvous
// (PeerDirectory). Two regions: a small signal area (the peer kernels' flags and the
// capability probe), mapped once, and a data region that grows on demand, which the
// choices carve their buffers from at the same offsets on every rank.
//
// Probe() decides whether peer kernels can run here by trying, not by trusting
// cudaDeviceCanAccessPeer: same node (kernel boot id and node name, core/node/node_name.h), IPC
// handles open, and a value every rank writes into every peer comes back. When it cannot, problem()
// says why, and the peer choices are skipped with that reason.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/deadline.h"
#include "core/base/status.h"
#include "core/gpu/cuda_resources.h"
#include "core/kernels/peer_kernels.h"
#include "core/peers/peer_directory.h"

namespace ccltune::gpu {

// This process, unique across the node and its containers: "<boot id>/<pid>/<random>".
// Ranks that report the same token are threads (or one thread's devices) of one process:
// they reach each other's memory directly (CUDA IPC cannot open a handle of its own
// process), and their teardown must not wait on each other (they destroy one by one).
const std::string& ProcessToken();

// A peer's allocation opened here; closed on destruction.
class IpcMapping {
 public:
  IpcMapping() = default;
  explicit IpcMapping(void* ptr) : ptr_(ptr) {}
  IpcMapping(IpcMapping&& o) noexcept : ptr_(o.ptr_) { o.ptr_ = nullptr; }
  IpcMapping& operator=(IpcMapping&& o) noexcept;
  ~IpcMapping();
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

// One region shared by all ranks: ours (allocated here) and everyone's as mapped here.
struct SharedRegion {
  DeviceBuffer own;
  std::vector<IpcMapping> mapped;  // by rank; ours and same-process peers' stay empty
  std::vector<void*> base;         // by rank, ours included
  std::size_t bytes = 0;
};

class PeerMemory {
 public:
  // Collective: every rank calls it at the same point. Never fails the backend: errors
  // that mean "not here" become problem(); a Redis timeout is returned.
  static core::Result<std::unique_ptr<PeerMemory>> Probe(int rank, int world,
                                                         core::PeerDirectory& dir,
                                                         cudaStream_t stream,
                                                         core::Deadline deadline);
  // Peer memory that is off (CCLTUNE_PEER_MEMORY=0): every peer choice skips with `why`.
  static std::unique_ptr<PeerMemory> Unavailable(int rank, int world, core::PeerDirectory& dir,
                                                 std::string why);
  ~PeerMemory();

  int rank() const { return rank_; }
  int world() const { return world_; }
  // Peers in this process, reached by direct peer access rather than CUDA IPC (after a
  // successful Probe; 0 for the worker's one-process-per-rank layout).
  int same_process_peers() const { return same_process_peers_; }
  const std::string& problem() const { return problem_; }
  bool usable() const { return problem_.empty(); }

  // Collective when it grows: every rank asks for the same size at the same point, and no
  // peer kernel may be running anywhere (the caller aligns the ranks first). Earlier data
  // pointers are invalid after a growth.
  core::Status Reserve(std::size_t bytes, core::Deadline deadline);
  bool Fits(std::size_t bytes) const { return data_.bytes >= bytes; }
  // Rank r's data region at `offset`, as mapped here.
  void* Data(int r, std::size_t offset) const;

  // Flags, epochs and the timed-out words for the kernels; `timeout_ns` bounds their waits.
  // fail_stop is left 0 (the worker's behaviour); the runtime sets it.
  kernels::PeerTeam Team(std::uint64_t timeout_ns) const;
  // Clears our flags and epochs on `stream` (every rank must, and meet, before any next
  // peer kernel) and the timed-out words.
  core::Status Reset(cudaStream_t stream);
  bool TimedOut() const { return TimedOutWords()[0] != 0; }
  // The ranks a wait that ran out gave up on (empty when none did, or none was noted).
  std::vector<int> MissingRanks() const;
  // The kernels' timed-out words as the host sees them (kernels::kTimedOutWords): plain
  // host memory, readable after the GPU context failed; valid while this object lives.
  const volatile int* TimedOutWords() const {
    return static_cast<const volatile int*>(timed_out_.host());
  }

 private:
  PeerMemory(int rank, int world, core::PeerDirectory& dir)
      : rank_(rank), world_(world), dir_(dir) {}
  core::Result<std::string> SameNode(core::Deadline deadline);
  core::Status Share(SharedRegion& region, std::size_t bytes, const std::string& name,
                     core::Deadline deadline, std::string* problem);
  core::Status CheckWrites(cudaStream_t stream, core::Deadline deadline);

  int rank_;
  int world_;
  core::PeerDirectory& dir_;
  std::string problem_;
  SharedRegion signals_;  // PeerSignals, then the probe slots
  SharedRegion data_;
  DeviceBuffer epochs_;
  MappedHost timed_out_;  // kernels::kTimedOutWords ints
  int generation_ = 0;
  int same_process_peers_ = 0;
};

}  // namespace ccltune::gpu
