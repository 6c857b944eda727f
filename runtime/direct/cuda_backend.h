// The direct exchange's GPU side (direct_backend.h) with CUDA: cudaMalloc memory travels as
// a CUDA IPC handle; virtual-memory allocations (PyTorch's expandable segments, made
// shareable as file descriptors) as their descriptor, imported and mapped here. The slots
// are one device array of kernels::DirectSlot, zeroed at start (nothing vouched for), and
// written on a stream of this backend's own.
#pragma once

#include <memory>

#include "core/base/status.h"
#include "runtime/direct/direct_backend.h"

namespace ccltune::runtime::direct {

core::Result<std::unique_ptr<DirectBackend>> MakeCudaBackend(int device, int slots);

}  // namespace ccltune::runtime::direct
