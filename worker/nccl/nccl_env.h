// The process environment NCCL reads once, at its first call: the in-process tuner plugin by
// absolute path. Call before any NCCL function. Every other NCCL_* variable (NCCL_NVLS_ENABLE
// included) reaches NCCL as the user set it, or stays unset.
#pragma once

#include <optional>
#include <string>

#include "core/base/status.h"
#include "worker/nccl/tuner_control.h"

namespace ccltune::worker::nccl {

// Absolute path of libccltune-inproc-tuner.so: $CCLTUNE_INPROC_TUNER, else next to the
// running executable. NotFound says where it looked.
core::Result<std::string> FindInprocTuner();

// Points NCCL_TUNER_PLUGIN at `path` (overriding another plugin: forcing choices needs ours).
void UseTunerPlugin(const std::string& path);

// The in-process tuner, loaded and named in NCCL_TUNER_PLUGIN; or, without it, why not
// (forced `nccl:algo=...` choices are then off).
struct TunerSetup {
  std::optional<TunerControl> tuner;
  std::string problem;
};

// The backend's set-up of the environment before NCCL's first call: FindInprocTuner, load it,
// UseTunerPlugin. NCCL_TUNER_PLUGIN is the one variable it sets.
TunerSetup SetUpTuner();

}  // namespace ccltune::worker::nccl
