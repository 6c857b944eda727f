/* A deliberately broken preload layer (negative test of nccl_shim_test.py): it forwards each
 * ncclAllReduce twice, with the same arguments, a change that a check of each call's
 * arguments (or of a subsequence of the calls) would miss. The fake-NCCL checks must fail on
 * it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <nccl.h>

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  ncclResult_t (*next)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                       cudaStream_t) =
      (ncclResult_t(*)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                       cudaStream_t))dlsym(RTLD_NEXT, "ncclAllReduce");
  ncclResult_t first = next(sendbuff, recvbuff, count, datatype, op, comm, stream);
  return first != ncclSuccess ? first : next(sendbuff, recvbuff, count, datatype, op, comm, stream);
}
