// The process environment NCCL reads once, at its first call: NVLink multicast off (the GPU
// machines are shared and NVLS can take them out of service) and the in-process tuner
// plugin by absolute path. Call before any NCCL function.
#pragma once

#include <string>

#include "core/base/status.h"

namespace ccltune::worker::nccl {

// Sets NCCL_NVLS_ENABLE=0 (and the PyTorch/NVSHMEM equivalents) when unset; refuses to run
// when NCCL_NVLS_ENABLE is set to anything but 0.
core::Status EnforceNoMulticast();

// Absolute path of libccltune-inproc-tuner.so: $CCLTUNE_INPROC_TUNER, else next to the
// running executable. NotFound says where it looked.
core::Result<std::string> FindInprocTuner();

// Points NCCL_TUNER_PLUGIN at `path` (overriding another plugin: forcing choices needs ours).
void UseTunerPlugin(const std::string& path);

}  // namespace ccltune::worker::nccl
