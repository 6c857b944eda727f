/*
 * libccltune: run ccltune's tuned winners inside an application (docs/design.md §8, issue 15).
 *
 * The application keeps its own NCCL communicator; ccltuneCommInit wraps it. At init the
 * runtime computes the communicator's fingerprint, loads that fingerprint's published
 * winners (the shared Redis cache or a file from `ccltune export --format json`, within a
 * bounded time, as the NCCL tuner plugin does), sets up what the winners need (peer memory
 * shared over CUDA IPC, handles exchanged over the NCCL communicator itself; communicators
 * with other CTA counts) and builds a dispatch table per (op, dtype, redop, size bucket).
 * Each ccltuneAllReduce / AllGather / ReduceScatter then runs the winner of the nearest
 * tuned size that this runtime can run for those buffers, and NCCL for anything else.
 * Since 0.2 (issue 16) the all-reduce + epilogue of tensor-parallel inference too
 * (ccltuneAllReduceResidualRmsNorm, ccltuneAllReduceBias): tuned per (dtype, epilogue,
 * hidden) and tokens, run fused in one launch where that won, else NCCL and a separate kernel.
 *
 * A C ABI in NCCL's style: opaque context objects, a result code per call, a versioned
 * config struct. Nothing here blocks without a bound, and nothing here throws.
 *
 * Collective contract (as for NCCL itself): every rank calls the same functions in the same
 * order with the same counts, types and ops. Buffers from ccltuneMemAlloc must be passed
 * on every rank or on none for one call (the choice of kernel depends on it), and with the
 * same 16-byte alignment on every rank. A peer kernel whose peer does not arrive within
 * the config's timeout stops the GPU context (a device-side trap, since 0.2: issue 36), so
 * that no result computed without that peer reaches the program as valid, eagerly or in a
 * CUDA graph replay: the context's next synchronisation fails, one line on stderr names
 * the communicator, the rank(s) that did not arrive and the timeout, and every later call
 * on the communicator returns ccltuneTimeout with that text (ccltuneGetLastError).
 */
#ifndef CCLTUNE_H_
#define CCLTUNE_H_

#include <cuda_runtime.h>
#include <nccl.h>
#include <stddef.h>

#define CCLTUNE_MAJOR 0
#define CCLTUNE_MINOR 2
#define CCLTUNE_PATCH 0
#define CCLTUNE_VERSION_CODE (CCLTUNE_MAJOR * 10000 + CCLTUNE_MINOR * 100 + CCLTUNE_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ccltuneSuccess = 0,
  ccltuneInvalidArgument = 1, /* a bad argument or config field; the message names it */
  ccltuneCudaError = 2,       /* a CUDA call failed */
  ccltuneNcclError = 3,       /* an NCCL call failed */
  ccltuneTimeout = 4,         /* a bounded wait ran out (a peer never arrived) */
  ccltuneInternalError = 5,
  ccltuneNumResults = 6
} ccltuneResult_t;

typedef enum {
  ccltuneAllReduceOp = 0,
  ccltuneAllGatherOp = 1,
  ccltuneReduceScatterOp = 2
} ccltuneOp_t;

/* The work after an all-reduce (ccltuneGetEpilogueChoice). Since 0.2. */
typedef enum {
  ccltuneEpilogueNone = 0,           /* a plain sum all-reduce of tokens x hidden elements */
  ccltuneEpilogueBias = 1,           /* ccltuneAllReduceBias */
  ccltuneEpilogueResidualRmsNorm = 2 /* ccltuneAllReduceResidualRmsNorm */
} ccltuneEpilogue_t;

typedef struct ccltuneComm* ccltuneComm_t;

/* Zero or NULL in a field means "the default, or the environment variable named". */
typedef struct {
  size_t size;             /* sizeof(ccltuneConfig_t): lets later versions add fields */
  int version;             /* CCLTUNE_VERSION_CODE the caller was built with: same major,
                              minor up to the library's */
  const char* resultsFile; /* CCLTUNE_RESULTS_FILE: `ccltune export --format json` output */
  const char* redisUrl;    /* CCLTUNE_REDIS_URL: redis://[[user]:password@]host[:port][/db] */
  const char* fingerprint; /* CCLTUNE_FINGERPRINT: use this instead of computing it */
  int loadTimeoutMs;       /* CCLTUNE_PLUGIN_TIMEOUT_MS (the tuner plugin's bound too),
                              1..10000, default 100 */
  int timeoutMs;           /* CCLTUNE_TIMEOUT_MS: bound of every collective wait at init and
                              destroy and of a peer kernel's wait for its peers, 100..600000,
                              default 30000. A peer later than this stops the GPU context:
                              set it above the longest legitimate skew between ranks at a
                              collective (a rank writing a checkpoint while others wait) */
  size_t poolBytes;        /* CCLTUNE_POOL_BYTES: peer memory ccltuneMemAlloc hands out;
                              default 0 (no pool) */
  size_t stagingBytes;     /* peer memory for the kernels' staging, default 256 MiB
                              (CCLTUNE_STAGING_BYTES) */
  int peerMemory;          /* CCLTUNE_PEER_MEMORY: 1 on (default), 0 off */
} ccltuneConfig_t;

#define CCLTUNE_CONFIG_INITIALIZER \
  { sizeof(ccltuneConfig_t), CCLTUNE_VERSION_CODE, NULL, NULL, NULL, 0, 0, 0, 0, -1 }

/* Collective over `nccl`'s ranks; `nccl` must outlive the ccltune communicator. Never fails
 * for want of winners: no winners, an unreachable cache, another fingerprint's winners or
 * peer memory that cannot be set up leave NCCL for every call, with one log line on
 * stderr (CCLTUNE_LOG=quiet silences it). Fails on bad config fields and on CUDA/NCCL
 * errors, or when the ranks do not all arrive within timeoutMs. */
ccltuneResult_t ccltuneCommInit(ncclComm_t nccl, const ccltuneConfig_t* config,
                                ccltuneComm_t* comm);
/* Frees what init made; waits (bounded) for this runtime's work on the GPU first. */
ccltuneResult_t ccltuneCommDestroy(ccltuneComm_t comm);

/* Enqueue only, on `stream`; capturable in CUDA graphs; in place (send == recv, or
 * send == recv + rank * count for allGather) and out of place. Counts are NCCL's:
 * allGather's sendcount and reduceScatter's recvcount are per rank. Thread-safe. */
ccltuneResult_t ccltuneAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                 ncclDataType_t datatype, ncclRedOp_t op, ccltuneComm_t comm,
                                 cudaStream_t stream);
ccltuneResult_t ccltuneAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                 ncclDataType_t datatype, ccltuneComm_t comm, cudaStream_t stream);
ccltuneResult_t ccltuneReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                     ncclDataType_t datatype, ncclRedOp_t op, ccltuneComm_t comm,
                                     cudaStream_t stream);

/* What a call of `bytes` (the whole message: allReduce count x size, allGather and
 * reduceScatter world x per-rank count x size) would run: a choice name such as "nccl",
 * "oneshot:blocks=64,threads=256,mode=ll", "rs+ag"; `pooled` != 0 asks for buffers from
 * ccltuneMemAlloc. Writes at most `len` bytes including the terminating NUL. */
ccltuneResult_t ccltuneGetChoice(ccltuneComm_t comm, ccltuneOp_t op, ncclDataType_t datatype,
                                 ncclRedOp_t redop, size_t bytes, int pooled, char* name,
                                 size_t len);

/* All-reduce + epilogue (since 0.2): what follows the all-reduce of a row-parallel layer's
 * output in tensor-parallel inference, in one call. `input` is tokens x hidden elements,
 * row-major: this rank's partial sums. Then
 *   ResidualRmsNorm: residual <- residual + sum (in place; the same on every rank, as tensor
 *                    parallelism keeps it), out <- residual / sqrt(mean(residual^2) + eps)
 *                    * weight, row by row (fp32 arithmetic);
 *   Bias:            out <- sum + bias (bias: hidden elements).
 * `out` may alias `input` (the partial sums are then consumed); `residual` aliases neither.
 * Float types only (ncclFloat32, ncclFloat16, ncclBfloat16); hidden a multiple of 8 up to
 * 16384; every pointer 16-byte aligned. Collective, enqueue only, capturable, thread-safe,
 * as ccltuneAllReduce. Runs the winner of the nearest tuned tokens x hidden x dtype size of
 * this (dtype, epilogue, hidden): an all-reduce choice followed by the separate epilogue
 * kernel, or a fused kernel doing both in one launch. The fused kernels read and write the
 * peers' buffers: they run only when input, out and residual (bias: input and out) all come
 * from ccltuneMemAlloc; other buffers get the fastest unfused choice. Without winners for
 * the call: NCCL's all-reduce, then the separate kernel. Bad arguments are
 * ccltuneInvalidArgument naming the argument, checked before anything is enqueued. */
ccltuneResult_t ccltuneAllReduceResidualRmsNorm(const void* input, void* residual,
                                                const void* weight, void* out, size_t tokens,
                                                size_t hidden, float eps, ncclDataType_t datatype,
                                                ccltuneComm_t comm, cudaStream_t stream);
ccltuneResult_t ccltuneAllReduceBias(const void* input, const void* bias, void* out, size_t tokens,
                                     size_t hidden, ncclDataType_t datatype, ccltuneComm_t comm,
                                     cudaStream_t stream);

/* What an all-reduce + `epilogue` call of tokens x hidden elements would run (since 0.2):
 * "nccl" (NCCL's all-reduce, then the separate epilogue kernel), another all-reduce choice
 * (also followed by the separate kernel), or a fused one ("oneshot-fused:...",
 * "twoshot-fused:..."). ccltuneEpilogueNone asks for the plain sum all-reduce of that size,
 * as ccltuneGetChoice does. `pooled` != 0: every buffer of the call from ccltuneMemAlloc.
 * What the exact call still rules out (one-shot pull in place) is not applied here. */
ccltuneResult_t ccltuneGetEpilogueChoice(ccltuneComm_t comm, ccltuneEpilogue_t epilogue,
                                         size_t hidden, ncclDataType_t datatype, size_t tokens,
                                         int pooled, char* name, size_t len);

/* Collective: every rank asks for the same sizes in the same order, so a buffer lies at
 * the same offset of every rank's pool and peer kernels reach it without copies. Where
 * peer memory cannot be set up (one rank, ranks on several nodes, CCLTUNE_PEER_MEMORY=0)
 * the pool is ordinary device memory of this rank, so the same program still runs. */
ccltuneResult_t ccltuneMemAlloc(ccltuneComm_t comm, void** ptr, size_t bytes);
ccltuneResult_t ccltuneMemFree(ccltuneComm_t comm, void* ptr);

/* The program's own memory for calls captured in CUDA graphs (issue 43): a
 * staged all-reduce captured by ranks in several processes of one node reads and writes
 * the peers' buffers directly, with no copy, once every rank's buffers of the call lie in
 * registered segments and every rank has mapped the others' (until then, and after any
 * of them is deregistered, the captured call copies through the staging area, right
 * either way). Register whole allocations (cudaMalloc, or virtual-memory allocations made
 * shareable as POSIX file descriptors). Deregister before the memory is freed or reused:
 * from its return on, no launch reads this rank's old buffers through a peer. Counted:
 * a segment registered n times is live until its n-th deregistration. Process-wide, so no
 * communicator argument; libccltune-nccl registers what the program registers with NCCL
 * (ncclCommRegister, which PyTorch does for every segment with
 * TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK=1). */
ccltuneResult_t ccltuneMemRegister(const void* ptr, size_t bytes);
ccltuneResult_t ccltuneMemDeregister(const void* ptr);

/* *error = ccltuneTimeout once a peer kernel's bounded wait ran out (it then stopped the GPU
 * context; later calls fail too), and ccltuneGetLastError names the rank(s) and timeout. */
ccltuneResult_t ccltuneCommGetAsyncError(ccltuneComm_t comm, ccltuneResult_t* error);

const char* ccltuneGetErrorString(ccltuneResult_t result);
/* The message of this thread's last failed call ("" when none). */
const char* ccltuneGetLastError(void);
ccltuneResult_t ccltuneGetVersion(int* version);

#ifdef __cplusplus
}
#endif

#endif /* CCLTUNE_H_ */
