/* libccltune-telemetry.so.1: what collectives cost inside a running program (issue 45,
 * docs/design.md §13). One instance per process, shared by everything of ours that the
 * program loads: libccltune (our kernels), libccltune-nccl (the preload) and
 * libnccl-profiler-ccltune (NCCL's own calls). Each links this library by soname, so the
 * dynamic loader maps it once and there is one exporter, one port, one set of series.
 *
 * A C ABI, versioned: structs carry their size first (a newer caller's larger struct is
 * read up to the size this library knows, an older caller's smaller one reads as zeros
 * beyond its size: fields are only ever added at the end), and CCLTUNE_TELEMETRY_ABI_VERSION
 * is bumped on any incompatible change.
 *
 * Blocking: no function here blocks on I/O, a lock held across I/O, or the GPU. Recording a
 * call copies it into a bounded queue (a full queue drops the call, counts it and says so
 * once); a thread of the library turns records into series, matches NCCL's calls across
 * ranks through Redis, serves /metrics and pushes to a Pushgateway.
 * Thread-safety: every function may be called from any thread.
 * Off (CCLTUNE_TELEMETRY unset or off, or a bad setting): every function returns at once,
 * nothing is started, no thread, no socket. */
#ifndef CCLTUNE_TELEMETRY_H_
#define CCLTUNE_TELEMETRY_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CCLTUNE_TELEMETRY_ABI_VERSION 1

/* Which timer measured a call's split into sync wait and transfer (label `method`). */
typedef enum {
  /* No split: only the collective's time is known (NCCL's calls outside a sampled window,
   * or no Redis to match them through). */
  ccltuneTelemetrySplitNone = 0,
  /* Our kernels: %globaltimer at entry, when the last peer's arrival was seen, at finish,
   * on this rank's GPU (method="kernel"). */
  ccltuneTelemetrySplitKernel = 1,
  /* Set by the library, never by a caller: wait = own time - the minimum over the ranks
   * of the same call (communicator hash + sequence number) (method="min-over-ranks"). */
  ccltuneTelemetrySplitMinOverRanks = 2,
} ccltuneTelemetrySplit_t;

/* A communicator, once, before its first call is recorded (later calls with the same
 * hash update nothing). */
typedef struct {
  size_t size;        /* sizeof(ccltuneTelemetryComm_t) */
  uint64_t comm_hash; /* the communicator's id, equal on all its ranks (NCCL's commHash
                         for the profiler plugin; the runtime's clique hash for ours) */
  int rank;           /* this process's rank in it */
  int nranks;
  int cuda_device; /* the CUDA device it runs on, -1 unknown: the port's local rank
                      when LOCAL_RANK (or SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK)
                      is not set */
} ccltuneTelemetryComm_t;

/* One collective call on one rank, as its GPU ran it. */
typedef struct {
  size_t size; /* sizeof(ccltuneTelemetryCall_t) */
  uint64_t comm_hash;
  const char* op;                /* design §5 op names: allReduce, allGather, reduceScatter, ... */
  const char* dtype;             /* fp32, bf16, fp16, int32, ... */
  uint64_t bytes;                /* the problem's size as the tune keys it (docs/design.md §4) */
  const char* choice;            /* the choice that ran, by its §5 name: "oneshot:...,mode=pull",
                                    "nccl" (NCCL's pick), "nccl:algo=ring,proto=ll" (NCCL's calls:
                                    the algorithm and protocol the profiler saw); it also gives the
                                    label `source`: "nccl" and "nccl:..." are NCCL's kernels
                                    (source="nccl", matched across ranks when sampled), any other
                                    choice ours (source="ccltune") */
  uint64_t seq;                  /* the call's number on its communicator, equal on every rank for
                                    the same call; UINT64_MAX unknown (then never matched) */
  uint64_t total_ns;             /* GPU time on this rank: entry to finish */
  ccltuneTelemetrySplit_t split; /* None or Kernel */
  uint64_t wait_ns;              /* Kernel: entry -> the last peer's arrival seen */
  uint64_t transfer_ns;          /* Kernel: the last arrival -> finish */
  int channels;                  /* NCCL's channels (profiler), or our kernel's blocks; 0 unknown */
  uint32_t reserved;             /* 0. Keeps `flags` beyond the 96 bytes of the first layout,
                                    whose tail padding an older caller may leave unset */
  uint32_t flags;                /* CCLTUNE_TELEMETRY_CALL_*, or 0: one call, counted and timed.
                                    A caller whose struct ends before it reads as 0 */
} ccltuneTelemetryCall_t;

/* A call split into two records, for a caller that counts every call but times only some
 * (the profiler plugin's duty cycle, design §13):
 * UNTIMED  the call ran: it is counted in ccltune_program_calls_total under its choice, and
 *          nothing else. Its times are ignored: no histogram observation, never kept by the
 *          min-over-ranks matcher, and its seq does not tell the matcher how far the
 *          communicator got.
 * COUNTED  the times of a call that an UNTIMED record counted already: the histograms and the
 *          matcher as for flags 0, but calls_total is not incremented again.
 * Both set: the record changes nothing. */
#define CCLTUNE_TELEMETRY_CALL_UNTIMED 1u
#define CCLTUNE_TELEMETRY_CALL_COUNTED 2u

/* The calls the min-over-ranks matcher samples on every rank: seq % WINDOW < SAMPLED (per
 * communicator and op). A caller that can choose which calls to time (the profiler plugin)
 * times these. */
#define CCLTUNE_TELEMETRY_MATCH_WINDOW_CALLS 1024u
#define CCLTUNE_TELEMETRY_MATCH_SAMPLED_CALLS 64u

/* CCLTUNE_TELEMETRY_ABI_VERSION of the loaded library. */
int ccltuneTelemetryAbiVersion(void);

/* 1 when telemetry is on and started (settings valid), else 0. Cheap: callers test it once
 * per communicator and skip all recording work when 0. */
int ccltuneTelemetryEnabled(void);

void ccltuneTelemetryCommInit(const ccltuneTelemetryComm_t* comm);

/* Never blocks; a call that finds the queue full is dropped and counted. */
void ccltuneTelemetryRecordCall(const ccltuneTelemetryCall_t* call);

/* `n` calls that a ccltune library forwarded to NCCL unchanged, by why
 * ("nccl-won", "buffers-not-shared", "in-group", "nonblocking-comm", ...). */
void ccltuneTelemetryForwarded(const char* reason, uint64_t n);

/* `n` records lost before they reached the library, by where ("kernel-ring-full",
 * "profiler-events-full", ...): counted in ccltune_program_telemetry_dropped_total. */
void ccltuneTelemetryDropped(const char* what, uint64_t n);

/* The winner's tuned time for a size, to set beside what runs (one gauge per key). */
void ccltuneTelemetryTuned(uint64_t comm_hash, const char* op, const char* dtype, uint64_t bytes,
                           const char* choice, double tuned_seconds);

/* Stops the threads and the endpoint, after one last push (bounded by 2 s). Called by the
 * library's own destructor at exit; callers need not. */
void ccltuneTelemetryShutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* CCLTUNE_TELEMETRY_H_ */
