#include "worker/rank/backend_factory.h"

#include "worker/host/host_backend.h"
#ifdef CCLTUNE_HAVE_NCCL_BACKEND
#include <cuda_runtime_api.h>

#include "worker/nccl/nccl_backend.h"
#endif

namespace ccltune::worker {

core::Result<std::unique_ptr<Backend>> CreateBackend(const BackendParams& p,
                                                     PeerDirectory& directory,
                                                     const CancelToken& cancel,
                                                     const core::BenchmarkSpec& bench,
                                                     Deadline deadline) {
  if (p.name == "host") {
    return host::CreateHostBackend(p.rank, p.world_size, directory, cancel, p.listen_host,
                                   deadline);
  }
  if (p.name == "nccl") {
#ifdef CCLTUNE_HAVE_NCCL_BACKEND
    return CreateNcclBackend(p.rank, p.world_size, p.local_rank, directory, cancel, bench);
#else
    (void)bench;
    return core::FailedPrecondition("this ccltune was built without CUDA/NCCL");
#endif
  }
  return core::InvalidArgument("backend '" + p.name + "' is not one of nccl, host");
}

int VisibleGpuCount() {
#ifdef CCLTUNE_HAVE_NCCL_BACKEND
  // cudaErrorInsufficientDriver on machines without a GPU (CI): that is "no GPU".
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
#else
  return 0;
#endif
}

std::string AutoBackend(std::string* why) {
#ifdef CCLTUNE_HAVE_NCCL_BACKEND
  if (NcclAvailable(why)) return "nccl";
  return "host";
#else
  if (why) *why = "built without CUDA/NCCL";
  return "host";
#endif
}

}  // namespace ccltune::worker
