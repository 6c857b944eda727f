// What the direct exchange (direct_exchange.h) needs from the GPU, behind an interface:
// cuda_backend.h maps real memory with CUDA IPC and writes the kernels' tables; the unit
// tests' backend logs each call, so the protocol runs without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "runtime/direct/segment_registry.h"
#include "runtime/direct/unix_channel.h"

namespace ccltune::runtime::direct {

inline constexpr int kMaxRanks = 8;              // kernels::kMaxPeers
inline constexpr std::size_t kHandleBytes = 96;  // a kind tag and cudaIpcMemHandle_t (64)

// A segment of this process as a peer can open it: the allocation that holds it.
struct Exported {
  std::string handle;  // at most kHandleBytes
  core::UniqueFd fd;   // a virtual-memory allocation's descriptor; none for CUDA IPC
  std::uintptr_t allocation_base = 0;
};

// One captured call's table as the kernel reads it (kernels::DirectSlot): every rank's
// input and output as mapped here.
struct SlotTable {
  std::uintptr_t in[kMaxRanks] = {};
  std::uintptr_t out[kMaxRanks] = {};
};

class DirectBackend {
 public:
  virtual ~DirectBackend() = default;
  virtual core::Result<Exported> Export(const Segment& s) = 0;
  // Rank `rank`'s allocation behind segment `segment`, mapped here: its base.
  virtual core::Result<std::uintptr_t> Open(int rank, std::uint64_t segment,
                                            const std::string& handle, int fd) = 0;
  virtual void Close(int rank, std::uint64_t segment) = 0;
  // Writes slot `slot`'s entries, then its valid word, and returns once a later launch
  // reads them.
  virtual core::Status Publish(int slot, const SlotTable& table) = 0;
  // Clears slot `slot`'s valid word; returns once no later launch can read it set.
  virtual core::Status Withdraw(int slot) = 0;
  // The kernels' address of slot `slot` (kernels::DirectSlot*).
  virtual const void* SlotAddress(int slot) const = 0;
};

}  // namespace ccltune::runtime::direct
