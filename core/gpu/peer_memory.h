// Peer memory for the ranks of one node (issue 6): device memory each rank exports with
// CUDA IPC and every other rank maps, handles exchanged through the Redis rendezvous
// (PeerDirectory). Two regions: a small signal area (the peer kernels' flags and the
// capability probe), mapped once, and a data region that grows on demand, which the
// choices carve their buffers from at the same offsets on every rank.
//
// Probe() decides whether peer kernels can run here by trying, not by trusting
// cudaDeviceCanAccessPeer: same node (kernel boot id and node name, core/node_name.h), IPC handles
// open, and a value every rank writes into every peer comes back. When it cannot, problem() says
// why, and the peer choices are skipped with that reason.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/gpu/cuda_resources.h"
#include "core/kernels/peer_kernels.h"
#include "core/peer_directory.h"
#include "core/status.h"

namespace ccltune::gpu {

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
  std::vector<IpcMapping> mapped;  // by rank; ours stays empty
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
  const std::string& problem() const { return problem_; }
  bool usable() const { return problem_.empty(); }

  // Collective when it grows: every rank asks for the same size at the same point, and no
  // peer kernel may be running anywhere (the caller aligns the ranks first). Earlier data
  // pointers are invalid after a growth.
  core::Status Reserve(std::size_t bytes, core::Deadline deadline);
  bool Fits(std::size_t bytes) const { return data_.bytes >= bytes; }
  // Rank r's data region at `offset`, as mapped here.
  void* Data(int r, std::size_t offset) const;

  // Flags, epochs and the timed-out word for the kernels; `timeout_ns` bounds their waits.
  kernels::PeerTeam Team(std::uint64_t timeout_ns) const;
  // Clears our flags and epochs on `stream` (every rank must, and meet, before any next
  // peer kernel) and the timed-out word.
  core::Status Reset(cudaStream_t stream);
  bool TimedOut() const { return *static_cast<volatile int*>(timed_out_.host()) != 0; }

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
  MappedHost timed_out_;
  int generation_ = 0;
};

}  // namespace ccltune::gpu
