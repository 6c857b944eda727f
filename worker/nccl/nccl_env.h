// The process environment NCCL reads once, at its first call: the in-process tuner plugin by
// absolute path. Call before any NCCL function. Every other NCCL_* variable (NCCL_NVLS_ENABLE
// included) reaches NCCL as the user set it, or stays unset.
#pragma once

#include <string>

#include "core/base/status.h"

namespace ccltune::worker::nccl {

// Absolute path of libccltune-inproc-tuner.so: $CCLTUNE_INPROC_TUNER, else next to the
// running executable. NotFound says where it looked.
core::Result<std::string> FindInprocTuner();

// Points NCCL_TUNER_PLUGIN at `path` (overriding another plugin: forcing choices needs ours).
void UseTunerPlugin(const std::string& path);

}  // namespace ccltune::worker::nccl
