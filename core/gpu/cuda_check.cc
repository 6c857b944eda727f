// Turns CUDA and NCCL error codes into Status messages (cuda_check.h).
#include "core/gpu/cuda_check.h"

#include <cstring>

#include "core/gpu/nccl_api.h"

namespace ccltune::gpu {
namespace {

std::string Where(const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  return std::string(base ? base + 1 : file) + ":" + std::to_string(line);
}

}  // namespace

core::Status CudaError(cudaError_t err, const char* expr, const char* file, int line) {
  (void)cudaGetLastError();
  return core::Internal(std::string(expr) + " failed at " + Where(file, line) + ": " +
                        cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

core::Status NcclError(ncclResult_t res, ncclComm_t comm, const char* expr, const char* file,
                       int line) {
  std::string msg =
      std::string(expr) + " failed at " + Where(file, line) + ": " + Nccl().GetErrorString(res);
  const char* last = Nccl().GetLastError(comm);
  if (last != nullptr && last[0] != '\0') msg += " (" + std::string(last) + ")";
  // A peer that vanished shows up as a remote or system error on the survivors.
  if (res == ncclRemoteError || res == ncclSystemError) return core::PeerLost(msg);
  return core::Internal(msg);
}

}  // namespace ccltune::gpu
