// Locating the real NCCL (real_nccl.h) and gpu::Nccl() for libccltune-nccl: the runtime's
// own NCCL calls (init's exchanges, NCCL's own choice, rs+ag) go to the real library.
#include "runtime/nccl_shim/real_nccl.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <set>

#include "core/gpu/nccl_api.h"
#include "runtime/nccl_shim/real_calls.h"
#include "runtime/nccl_shim/shim_log.h"

namespace ccltune::shim {
namespace {

void* g_handle = nullptr;  // RTLD_NEXT or a dlopen handle; set once under Real()'s call_once

const void* OwnBase() {
  Dl_info info{};
  return dladdr(reinterpret_cast<const void*>(&OwnBase), &info) != 0 ? info.dli_fbase : nullptr;
}

// The file defining `sym`, or "" when it is the shim (a libnccl.so.2 that is really us).
std::string FileOf(const void* sym) {
  Dl_info info{};
  if (sym == nullptr || dladdr(sym, &info) == 0 || info.dli_fbase == OwnBase()) return "";
  return info.dli_fname != nullptr ? info.dli_fname : "?";
}

// A handle whose ncclGetVersion is not ours, with the file it came from.
bool Accept(void* handle, const std::string& how, RealNccl* r) {
  if (handle == nullptr) return false;
  const std::string file = FileOf(dlsym(handle, "ncclGetVersion"));
  if (file.empty()) return false;
  g_handle = handle;
  r->found = true;
  r->path = file;
  r->how = how;
  return true;
}

void Locate(RealNccl* r) {
  if (const char* lib = std::getenv("CCLTUNE_NCCL_LIBRARY"); lib != nullptr && *lib != '\0') {
    void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!Accept(h, "CCLTUNE_NCCL_LIBRARY", r)) {
      const char* err = dlerror();
      r->problem = std::string("CCLTUNE_NCCL_LIBRARY=") + lib + ": " +
                   (h == nullptr && err != nullptr ? err : "not an NCCL other than this library");
    }
    return;
  }
  if (Accept(RTLD_NEXT, "RTLD_NEXT", r)) return;
  if (Accept(dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD), "loaded", r)) return;
  if (Accept(dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL), "dlopen", r)) return;
  r->problem =
      "no real NCCL found (none after this library, no libnccl.so.2 loaded or on the loader's "
      "path; set CCLTUNE_NCCL_LIBRARY to its path)";
}

void CheckVersion(RealNccl* r) {
  using GetVersion = ncclResult_t (*)(int*);
  auto get = reinterpret_cast<GetVersion>(dlsym(g_handle, "ncclGetVersion"));
  if (get == nullptr || get(&r->version) != ncclSuccess) {
    r->problem = r->path + ": ncclGetVersion failed; forwarding every call";
    return;
  }
  const int major = r->version / 10000, minor = (r->version % 10000) / 100;
  r->same_version = major == NCCL_MAJOR && minor == NCCL_MINOR;
  if (!r->same_version) {
    r->problem = r->path + " is NCCL " + std::to_string(r->version) + ", built against " +
                 std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) +
                 ": forwarding every call";
  }
}

}  // namespace

const RealNccl& Real() {
  static RealNccl real;
  static std::once_flag once;
  std::call_once(once, [] {
    Locate(&real);
    if (real.found) CheckVersion(&real);
    if (!real.problem.empty()) Note(real.problem);
  });
  return real;
}

void* RealSymbol(const char* name) {
  if (!Real().found) return nullptr;
  return dlsym(g_handle, name);
}

ncclResult_t MissingResult(const char* name) {
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mu);
  // Without any real NCCL, Real()'s one line has said it all.
  if (Real().found && said.insert(name).second) {
    Note(std::string(name) + ": not in the real NCCL (" + Real().path +
         "); returning ncclSystemError");
  }
  return ncclSystemError;
}

const char* MissingText(const char* name) {
  (void)MissingResult(name);
  return "ccltune-nccl: no real NCCL function (see the line on stderr)";
}

}  // namespace ccltune::shim

namespace ccltune::gpu {

const NcclApi& Nccl() {
  namespace real = shim::real;
  static const NcclApi api{real::ncclGetVersion,
                           real::ncclGetErrorString,
                           real::ncclGetLastError,
                           real::ncclCommCount,
                           real::ncclCommUserRank,
                           real::ncclCommCuDevice,
                           real::ncclCommGetAsyncError,
                           real::ncclCommSplit,
                           real::ncclCommDestroy,
                           real::ncclCommAbort,
                           real::ncclMemAlloc,
                           real::ncclMemFree,
                           real::ncclGroupStart,
                           real::ncclGroupEnd,
                           real::ncclSend,
                           real::ncclRecv,
                           real::ncclAllReduce,
                           real::ncclAllGather,
                           real::ncclReduceScatter,
                           real::ncclBroadcast};
  return api;
}

}  // namespace ccltune::gpu
