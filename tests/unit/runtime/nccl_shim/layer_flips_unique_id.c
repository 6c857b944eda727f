/* A deliberately broken preload layer (negative test of nccl_shim_test.py): it forwards
 * ncclCommInitRank and ncclCommInitRankConfig with byte 100 of the ncclUniqueId flipped, a
 * change an 8-byte comparison would miss. The fake-NCCL checks must fail on it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <nccl.h>

static void Flip(ncclUniqueId* id) { id->internal[100] ^= 0x01; }

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  ncclResult_t (*next)(ncclComm_t*, int, ncclUniqueId, int) =
      (ncclResult_t(*)(ncclComm_t*, int, ncclUniqueId, int))dlsym(RTLD_NEXT, "ncclCommInitRank");
  Flip(&id);
  return next(comm, nranks, id, rank);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t* config) {
  ncclResult_t (*next)(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*) =
      (ncclResult_t(*)(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*))dlsym(
          RTLD_NEXT, "ncclCommInitRankConfig");
  Flip(&id);
  return next(comm, nranks, id, rank, config);
}
