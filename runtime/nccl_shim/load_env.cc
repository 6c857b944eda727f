// What libccltune-nccl sets in the process's environment as it loads, before the program's
// main: PyTorch reads TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK when it makes a process
// group, before NCCL's first init (first_init.h is too late for it). With it, PyTorch
// registers every segment of its caching allocator with NCCL (ncclCommRegister, which the shim
// intercepts), so captured all-reduces run on the program's own tensors (direct mode,
// runtime/direct/). The admission webhook's `preload` sets the same; this makes a program
// preloaded by hand get it too. A value the environment holds is the user's and is kept;
// nothing is set with the shim off (CCLTUNE_NCCL=off|0) or direct mode off (CCLTUNE_DIRECT=0).
// Only the environment is read here: no NCCL is loaded, nothing is logged.
#include <cstdlib>
#include <cstring>

namespace {

bool Is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

__attribute__((constructor)) void SetRegisterHook() {
  if (Is("CCLTUNE_NCCL", "off") || Is("CCLTUNE_NCCL", "0") || Is("CCLTUNE_DIRECT", "0")) return;
  setenv("TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK", "1", /*overwrite=*/0);
}

}  // namespace
