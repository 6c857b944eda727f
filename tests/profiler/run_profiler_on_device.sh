#!/bin/bash
# The profiler plugin under real NCCL on a 2-GPU machine (issue 45), without this project's
# build: g++ builds libnccl-profiler-ccltune.so from plugin/profiler/ and a printing stand-in
# of libccltune-telemetry.so.1 (device/print_telemetry.c), then PyTorch runs NCCL collectives
# on 2 ranks under NCCL_PROFILER_PLUGIN (device/allreduce_profiled.py). Prints NCCL's
# profiler INFO lines, each reported call (TELEMETRY ...) and rank 0's CUDA-event times.
#   tests/profiler/run_profiler_on_device.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-/tmp/ccltune-profiler}
mkdir -p "$out"
cd "$root"
gcc -O2 -fPIC -shared -I. -Wl,-soname,libccltune-telemetry.so.1 \
  -o "$out/libccltune-telemetry.so.1" tests/profiler/device/print_telemetry.c
g++ -std=c++20 -O2 -fPIC -shared -fvisibility=hidden -I. \
  plugin/profiler/nccl_names.cc plugin/profiler/coll_event_pool.cc \
  plugin/profiler/profiler_settings.cc plugin/profiler/profiler_context.cc \
  plugin/profiler/profiler_plugin.cc \
  "$out/libccltune-telemetry.so.1" -Wl,-rpath,'$ORIGIN' -Wl,--no-undefined \
  -o "$out/libnccl-profiler-ccltune.so"
nm -D --defined-only "$out/libnccl-profiler-ccltune.so" | grep ncclProfiler_
# NVLink multicast stays off on shared machines.
NCCL_NVLS_ENABLE=0 CCLTUNE_TELEMETRY=on NCCL_PROFILER_PLUGIN="$out/libnccl-profiler-ccltune.so" \
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,PROFILE,ENV \
  python3 tests/profiler/device/allreduce_profiled.py 2>&1 |
  grep -E "TELEMETRY|EVENTS|torch|PROFILER|rofiler|ccltune|Error|error" | head -400
