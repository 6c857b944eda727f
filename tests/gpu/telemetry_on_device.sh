#!/bin/bash
# Program telemetry on GPUs (issue 45): an unmodified torch.distributed program whose last
# rank is D µs late on its GPU before each all-reduce (telemetry_delay_program.py), its
# /metrics scraped every second by a real Prometheus, checked by telemetry_check.py:
#   ours   libccltune-nccl preloaded: our kernels time themselves (method "kernel"), eager
#          and graph phases;
#   nccl   no preload, NCCL's profiler plugin: NCCL's own calls (method "min-over-ranks",
#          matched across ranks through the cache as the ccltune-telemetry user).
# Then the cost: a Llama-3-8B-shaped TP decode step (tp_decode_bench.py) under the preload
# with telemetry off and on, with what the step's all-reduces spent waiting; host time per
# call of libccltune's C API (runtime_bench, eager), off and on; nccl-tests all_reduce_perf 1 KiB-64 MiB with and without the
# profiler plugin (interleaved, twice each), when $NCCL_TESTS_BIN has it.
#
# On the GPU machine, from the repository root:
#   cmake --build build --target ccltune ccltune_nccl_shim ccltune_runtime ccltune_telemetry \
#     ccltune_nccl_profiler runtime_bench
#   GPUS=4 bash tests/gpu/telemetry_on_device.sh     # PARTS: any of delay cost decode nccltests
set -uo pipefail
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
export PYTHONUNBUFFERED=1
GPUS=${GPUS:-4}
PARTS=${PARTS:-delay cost decode nccltests}
DECODE_MODES=${DECODE_MODES:-graph,eager}  # the split is per size: one mode keeps it apart
part() { [[ " $PARTS " == *" $1 "* ]]; }
PHASES=${PHASES:-eager:2048:0 eager:4096:50 eager:8192:500 graph:16384:0 graph:32768:50 graph:65536:500}
work=$OUT/telemetry
rm -rf "$work" && mkdir -p "$work/redis" "$work/prom"
fail() { echo "FAILED: $*"; exit 1; }
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
trap 'kill "${pids[@]}" 2>/dev/null' EXIT

# The cache with the manifests' ACL users (jobs' default, ccltune-telemetry for programs).
port=$(freeport)
export REDIS_PASSWORD=jobs-$RANDOM$RANDOM READER_PASSWORD=reader-$RANDOM TELEMETRY_PASSWORD=tel-$RANDOM$RANDOM
sh -c "$(python3 tests/gpu/inject_env.py redis-command "$work/redis" "$port")" >"$work/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do redis-cli -p "$port" ping 2>/dev/null | grep -q NOAUTH && break; sleep 0.1; done

# Winners for torch's NCCL on this machine: the phases' sizes and the decode step's.
torch_nccl=$(torch_nccl_dir)
[ -n "$torch_nccl" ] || fail "no NCCL of torch's (nvidia.nccl) found"
devs=$(seq -s, 0 $((GPUS - 1)))
if part delay || part cost || part decode; then  # the parts that run winners
  sizes=$( (for p in $PHASES; do echo "${p#*:}" | cut -d: -f1; done; echo 8192 65536 524288 | tr ' ' '\n') |
    sort -un | paste -sd,)
  CUDA_VISIBLE_DEVICES=$devs LD_LIBRARY_PATH=$torch_nccl:$LD_LIBRARY_PATH timeout -k 5 400 \
    ccltune tune --backend nccl --ranks "$GPUS" --op allReduce --dtypes bf16 --sizes "$sizes" \
    --redis "redis://:$REDIS_PASSWORD@127.0.0.1:$port/0" >"$work/tune.txt" 2>&1 ||
    fail "ccltune tune: $(tail -3 "$work/tune.txt")"
  grep -E "^# .*fingerprint|^\| allReduce" "$work/tune.txt" | head -20
  ccltune export --format json --redis "redis://:$REDIS_PASSWORD@127.0.0.1:$port/0" \
    >"$work/winners.json" 2>"$work/export.err" || fail "export: $(cat "$work/export.err")"
fi

# A real Prometheus scraping every rank's endpoint (9464 + local rank) each second.
prom_port=$(freeport)
cat >"$work/prom/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: programs
    static_configs: [{targets: [$(for r in $(seq 0 $((GPUS - 1))); do printf '"127.0.0.1:%d",' $((9464 + r)); done | sed 's/,$//')]}]
YML
prometheus --config.file="$work/prom/prometheus.yml" --storage.tsdb.path="$work/prom/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prom/prometheus.log" 2>&1 &
pids+=($!)
prom=http://127.0.0.1:$prom_port
# The system's curl, not with the bundle's libraries first (its libcurl is another build's).
for _ in $(seq 100); do
  env -u LD_LIBRARY_PATH curl -sf "$prom/-/ready" >/dev/null && break
  sleep 0.2
done

shim=$(gpu_file libccltune-nccl.so)
profiler=$(gpu_file libnccl-profiler-ccltune.so)
telemetry_env=(CCLTUNE_TELEMETRY=on CCLTUNE_METRICS_PORT=9464 CCLTUNE_POD_NAMESPACE=bench
  CCLTUNE_NODE_NAME="$(hostname)" CCLTUNE_REDIS_URL="redis://127.0.0.1:$port/0"
  CCLTUNE_REDIS_USERNAME=ccltune-telemetry CCLTUNE_REDIS_PASSWORD="$TELEMETRY_PASSWORD")

delay_run() {  # delay_run NAME SOURCE [VAR=VALUE...]: the program's ranks, then the check
  local name=$1 source=$2 mport r rpids=()
  shift 2
  mport=$(freeport)
  for r in $(seq 0 $((GPUS - 1))); do
    env -u LD_PRELOAD "LD_LIBRARY_PATH=$torch_nccl:$CCLTUNE_GPU_LIBS" "${telemetry_env[@]}" "$@" \
      CCLTUNE_POD_NAME="$name-$r" MASTER_ADDR=127.0.0.1 MASTER_PORT="$mport" RANK=$r \
      WORLD_SIZE="$GPUS" LOCAL_RANK=$r timeout -k 5 300 python3 tests/gpu/telemetry_delay_program.py \
      "$work/$name.json" $PHASES >"$work/$name.rank$r.log" 2>&1 &
    rpids+=($!)
  done
  for _ in $(seq 1200); do [ -f "$work/$name.json" ] && break; sleep 0.25; done
  sleep 4  # the last values scraped
  python3 tests/gpu/telemetry_check.py "$prom" "$work/$name.json" "$source" \
    dashboards/ccltune-programs.json --md "$work/$name.md"
  local rc=$?
  touch "$work/$name.json.done"
  for p in "${rpids[@]}"; do wait "$p" || rc=1; done
  echo "$name: exit $rc"
  return $rc
}
status=0
if part delay; then
  echo "== ours: libccltune-nccl preloaded, our kernels' own timers"
  delay_run ours ccltune LD_PRELOAD="$shim" || status=1
  grep -h "calls served by winners" "$work"/ours.rank*.log | sort | uniq -c
  echo "== nccl: no preload, NCCL's profiler plugin"
  delay_run nccl nccl NCCL_PROFILER_PLUGIN="$profiler" || status=1
fi

if part cost; then
  echo "== host time per call: runtime_bench (libccltune's C API, eager), telemetry off / on, twice each"
  for i in 1 2; do
    for t in off on; do
      env "LD_LIBRARY_PATH=$torch_nccl:$CCLTUNE_GPU_LIBS:$LD_LIBRARY_PATH" "${telemetry_env[@]}" \
        CCLTUNE_TELEMETRY=$t CCLTUNE_METRICS_PORT=$((19464 + 10 * i)) CUDA_VISIBLE_DEVICES=$devs \
        timeout -k 5 200 "$(gpu_file runtime_bench)" "$work/winners.json" --gpus "$GPUS" \
        --iters 200 --rounds 9 >"$work/rb-$t-$i.md" 2>&1 || status=1
    done
  done
  python3 - "$work" <<'PY' | tee "$work/host-cost.md"
import statistics, sys
w = sys.argv[1]
def rows(t, i):
    out = {}
    for line in open("%s/rb-%s-%d.md" % (w, t, i)):
        f = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(f) == 10 and f[0].isdigit():
            out[int(f[0])] = (f[1], float(f[8]), float(f[3]))
    return out
runs = {t: [rows(t, i) for i in (1, 2)] for t in ("off", "on")}
print("| bytes | runtime runs | host µs/call, off | on | added (µs) | GPU µs/call, off | on |")
print("|---|---|---|---|---|---|---|")
for b in sorted(runs["off"][0]):
    off = statistics.median(r[b][1] for r in runs["off"])
    on = statistics.median(r[b][1] for r in runs["on"])
    g0 = statistics.median(r[b][2] for r in runs["off"])
    g1 = statistics.median(r[b][2] for r in runs["on"])
    print("| %d | %s | %.2f | %.2f | %+.2f | %.2f | %.2f |" % (b, runs["off"][0][b][0], off, on,
                                                             on - off, g0, g1))
PY
fi

part decode && echo "== decode step under the preload: telemetry off, then on"
for t in off on; do
  part decode || break
  env "LD_LIBRARY_PATH=$torch_nccl:$CCLTUNE_GPU_LIBS" "${telemetry_env[@]}" CCLTUNE_TELEMETRY=$t \
    CCLTUNE_POD_NAME=decode-$t LD_PRELOAD="$shim" CCLTUNE_LIBRARY="$(gpu_file libccltune.so.0)" \
    PYTHONPATH=runtime/python CCLTUNE_RESULTS_FILE="$work/winners.json" CUDA_VISIBLE_DEVICES=$devs \
    timeout -k 5 300 python3 tests/gpu/tp_decode_bench.py --gpus "$GPUS" --modes "$DECODE_MODES" \
    --winners "$work/winners.json" \
    >"$work/decode-telemetry-$t.md" 2>&1 || status=1
  tail -8 "$work/decode-telemetry-$t.md"
done
part decode && python3 tests/gpu/telemetry_decode_table.py "$prom" decode-on |
  tee "$work/decode-split.md"

if part nccltests && [ -x "${NCCL_TESTS_BIN:-}/all_reduce_perf" ]; then
  # Plain, the plugin as shipped (kernel channels timed for the sampled calls only) and the
  # plugin timing every call (as before the duty cycle), interleaved NT_ROUNDS times.
  echo "== nccl-tests all_reduce_perf -t $GPUS: plain, plugin, plugin timing every call"
  for i in $(seq "${NT_ROUNDS:-3}"); do
    for v in plain plugin every; do
      extra=()
      [ $v != plain ] && extra=(NCCL_PROFILER_PLUGIN="$profiler" "${telemetry_env[@]}")
      [ $v = every ] && extra+=(CCLTUNE_PROFILER_TIMING=every)
      env "LD_LIBRARY_PATH=$torch_nccl:$CCLTUNE_GPU_LIBS" "${extra[@]}" CUDA_VISIBLE_DEVICES=$devs \
        timeout -k 5 120 "$NCCL_TESTS_BIN/all_reduce_perf" -b 1K -e 64M -f 2 -g 1 -t "$GPUS" \
        -d bfloat16 -c 0 -w 20 -n "${NT_ITERS:-100}" >"$work/nt-$v-$i.txt" 2>&1 || status=1
    done
  done
  python3 tests/gpu/profiler_cost_table.py "$work" | tee "$work/profiler-cost.md"
fi
exit $status
