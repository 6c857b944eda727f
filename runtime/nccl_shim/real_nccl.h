// The real NCCL behind libccltune-nccl: found once, at the first call that needs it, and
// never the shim itself. Where: CCLTUNE_NCCL_LIBRARY when set; else the next definition
// after the shim (RTLD_NEXT: the shim was preloaded and the program linked NCCL); else the
// libnccl.so.2 already loaded (Python loads extensions RTLD_LOCAL, where RTLD_NEXT cannot
// see them); else libnccl.so.2 from the loader's path. A real NCCL whose major.minor is not
// the header's is used for forwarding only. Thread-safe; never blocks beyond the dlopen.
#pragma once

#include <nccl.h>

#include <string>

namespace ccltune::shim {

struct RealNccl {
  bool found = false;
  bool same_version = false;  // major.minor equal to the header's: ccltune may serve calls
  int version = 0;            // the real ncclGetVersion's code
  std::string path;           // the file it came from
  std::string how;            // "CCLTUNE_NCCL_LIBRARY", "RTLD_NEXT", "loaded", "dlopen"
  std::string problem;        // why not found, or why forward only; empty when serving
};

// The real NCCL, located on first use (one line on stderr when missing or of another version).
const RealNccl& Real();
// The real NCCL's definition of `name`, or nullptr (missing library or function).
void* RealSymbol(const char* name);
// What a forwarder returns when the real function is missing (one line per name, once).
ncclResult_t MissingResult(const char* name);
const char* MissingText(const char* name);

}  // namespace ccltune::shim
