// A stand-in for a hung collective (kernels.h): one thread spins on %globaltimer, so even a
// forgotten abort flag frees the GPU after max_ns.
#include "core/kernels/kernels.h"

namespace ccltune::kernels {
namespace {

__device__ inline std::uint64_t GlobalTimerNs() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void BoundedSpinKernel(const volatile int* abort_flag, std::uint64_t max_ns,
                                  int* timed_out) {
  const std::uint64_t start = GlobalTimerNs();
  while (*abort_flag == 0) {
    if (GlobalTimerNs() - start > max_ns) {
      *reinterpret_cast<volatile int*>(timed_out) = 1;
      return;
    }
    __nanosleep(1000);
  }
}

}  // namespace

cudaError_t LaunchBoundedSpin(const volatile int* abort_flag, std::uint64_t max_ns, int* timed_out,
                              cudaStream_t stream) {
  BoundedSpinKernel<<<1, 1, 0, stream>>>(abort_flag, max_ns, timed_out);
  return cudaGetLastError();
}

}  // namespace ccltune::kernels
