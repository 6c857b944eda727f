// core::PeerDirectory over the application's NCCL communicator: the runtime exchanges the
// peer-memory handles, node identities and verdicts with the ranks it serves, so nothing
// but NCCL is needed at run time (no Redis rendezvous). At init, and once per tuned size for
// an in-program trial's medians (dispatch_confirm.cc), at the same call on every rank: it
// allocates and waits. Each exchange is two ncclAllGathers (lengths, then the padded strings)
// on the runtime's own stream, bounded by the deadline. Used from one thread at a time.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <optional>
#include <string>
#include <vector>

#include "core/gpu/cuda_resources.h"
#include "core/peers/peer_directory.h"

namespace ccltune::runtime {

class NcclDirectory final : public core::PeerDirectory {
 public:
  NcclDirectory(ncclComm_t comm, int rank, int world, cudaStream_t stream)
      : comm_(comm), rank_(rank), world_(world), stream_(stream) {}
  ~NcclDirectory() override;
  NcclDirectory(const NcclDirectory&) = delete;
  NcclDirectory& operator=(const NcclDirectory&) = delete;

  core::Result<std::vector<std::string>> AllGather(const std::string& name, const std::string& mine,
                                                   core::Deadline deadline) override;
  core::Result<std::string> Broadcast(const std::string& name, int root,
                                      const std::optional<std::string>& value,
                                      core::Deadline deadline) override;

 private:
  // Every rank's `bytes` bytes of staging slot `world`, gathered into slots 0..world-1
  // of the pinned staging area (grown to (world + 1) * bytes first by Stage).
  core::Status Gather(std::size_t bytes, core::Deadline deadline, const std::string& what);
  core::Result<char*> Stage(std::size_t bytes);

  ncclComm_t comm_;
  int rank_;
  int world_;
  cudaStream_t stream_;
  gpu::MappedHost host_;  // pinned: the copies are asynchronous, waited for with a bound
  gpu::DeviceBuffer device_;
  std::size_t capacity_ = 0;  // bytes of each
  // After an exchange failed, NCCL or a copy may still write into the buffers, and freeing
  // memory under pending work would block: they are then left allocated (init fails).
  bool abandoned_ = false;
};

// Strings longer than this are refused (handles and verdicts are far shorter).
inline constexpr std::size_t kMaxDirectoryValue = 64 * 1024;

}  // namespace ccltune::runtime
