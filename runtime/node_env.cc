// libccltune's load-time step (issue 33): a pod's node name (CCLTUNE_NODE_NAME, from the
// downward API) becomes NCCL_HOSTID when that is unset, so NCCL, which hashes NCCL_HOSTID
// once per process at its first communicator's init (src/misc/utils.cc getHostHash), groups
// pods of one node as one node, as the runtime's node count (core::NcclHostKey) does. Runs
// when the library is loaded: at program start when linked, at `import ccltune.torch` in
// Python (before init_process_group creates a communicator, or NCCL has read it already).
// Only in libccltune.so: libccltune-nccl does the same at the first init it forwards.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/node/node_name.h"

namespace {

__attribute__((constructor)) void ExportNodeNameAtLoad() {
  const ccltune::core::NodeExport e = ccltune::core::ExportNodeNameToNccl();
  using What = ccltune::core::NodeExport::What;
  if (e.what != What::kConflict && e.what != What::kInvalid) return;
  const char* log = std::getenv("CCLTUNE_LOG");
  if (log == nullptr || std::strcmp(log, "quiet") != 0) {
    std::fprintf(stderr, "ccltune: %s\n", e.text.c_str());
  }
}

}  // namespace
