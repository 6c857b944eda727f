/* A stand-in for libccltune-telemetry.so.1 on a GPU machine without this project's build:
 * the C ABI of core/telemetry/ccltune_telemetry.h printing every call on stderr (one line
 * each), so that run_profiler_on_device.sh shows what the plugin reports for real NCCL calls.
 * Telemetry reads as on when CCLTUNE_TELEMETRY=on. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/telemetry/ccltune_telemetry.h"

int ccltuneTelemetryAbiVersion(void) { return CCLTUNE_TELEMETRY_ABI_VERSION; }

int ccltuneTelemetryEnabled(void) {
  const char* v = getenv("CCLTUNE_TELEMETRY");
  return v != NULL && strcmp(v, "on") == 0;
}

void ccltuneTelemetryCommInit(const ccltuneTelemetryComm_t* c) {
  fprintf(stderr, "TELEMETRY comm %016" PRIx64 " rank %d/%d device %d\n", c->comm_hash, c->rank,
          c->nranks, c->cuda_device);
}

void ccltuneTelemetryRecordCall(const ccltuneTelemetryCall_t* c) {
  fprintf(stderr,
          "TELEMETRY call comm=%016" PRIx64 " op=%s dtype=%s bytes=%" PRIu64
          " choice=%s seq=%" PRIu64 " total_ns=%" PRIu64 " channels=%d\n",
          c->comm_hash, c->op, c->dtype, c->bytes, c->choice, c->seq, c->total_ns, c->channels);
}

void ccltuneTelemetryForwarded(const char* reason, uint64_t n) { (void)reason, (void)n; }

void ccltuneTelemetryDropped(const char* what, uint64_t n) {
  fprintf(stderr, "TELEMETRY dropped %s %" PRIu64 "\n", what, n);
}

void ccltuneTelemetryTuned(uint64_t comm_hash, const char* op, const char* dtype, uint64_t bytes,
                           const char* choice, double tuned_seconds) {
  (void)comm_hash, (void)op, (void)dtype, (void)bytes, (void)choice, (void)tuned_seconds;
}

void ccltuneTelemetryShutdown(void) {}
