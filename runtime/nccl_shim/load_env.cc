// What libccltune-nccl sets in the process's environment as it loads, before the program's
// main: PyTorch reads TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK when it makes a process
// group, before NCCL's first init (first_init.h is too late for it). With it, PyTorch
// registers every segment of its caching allocator with NCCL (ncclCommRegister, which the shim
// intercepts), so captured all-reduces run on the program's own tensors (direct mode,
// runtime/direct/). The admission webhook's `preload` sets the same; this makes a program
// preloaded by hand get it too. A value the environment holds is the user's and is kept;
// nothing is set unless the shim's switch is on (shim_switch.h) and direct mode's is too
// (CCLTUNE_DIRECT read as the runtime reads it, core::EnvSwitch). Only the environment is
// read here: no NCCL is loaded, nothing is logged (the runtime names a bad value at init).
#include <cstdlib>

#include "core/base/env_switch.h"
#include "runtime/nccl_shim/shim_switch.h"

namespace {

__attribute__((constructor)) void SetRegisterHook() {
  using ccltune::shim::ShimSwitch;
  if (ccltune::shim::ShimSwitchOf(std::getenv("CCLTUNE_NCCL")) != ShimSwitch::kOn) return;
  const ccltune::core::Result<bool> direct =
      ccltune::core::EnvSwitch("CCLTUNE_DIRECT", std::getenv("CCLTUNE_DIRECT"), "off", "on");
  if (!direct.ok() || !*direct) return;
  setenv("TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK", "1", /*overwrite=*/0);
}

}  // namespace
