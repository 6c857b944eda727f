#!/bin/bash
# On a GPU machine: tunes allReduce with ccltune, exports the winners, then runs an
# unmodified nccl-tests all_reduce_perf without and with NCCL_TUNER_PLUGIN pointing at
# libnccl-tuner-ccltune.so (CCLTUNE_RESULTS_FILE = the export), and prints a side-by-side
# table: per size the winner, the choice the plugin applies for it (the winner, or for a
# ctas=N winner without NCCL_MIN_CTAS >= N the fastest choice a tuner can reproduce; the
# rule of core/apply/applied_choice.h, taken from `ccltune export --format applied-json` with
# PLUGIN_ENV's NCCL_MIN_CTAS as --min-ctas), ccltune's measured time of that applied
# choice, NCCL's default, the plugin's, and the two ratios; the last row is the worst of
# each. "plugin vs applied" is n/a where the plugin leaves NCCL alone because the winner is
# not NCCL-internal (nothing NCCL can be told was measured); where it applies `nccl` it is
# compared with ccltune's `nccl` time.
#
# On the GPU machine, from the repository root (nccl-tests built somewhere):
#   cmake --build build --target ccltune ccltune_nccl_tuner ccltune_inproc_tuner   # or make build
#   NCCL_TESTS_DIR=<nccl-tests>/build bash tests/plugin/run_plugin_on_device.sh
# tests/gpu/device_env.sh finds the built files (the build tree, or a bundle named by
# CCLTUNE_GPU_BUNDLE; BUNDLE=DIR is the older name) and keeps NVLink multicast off.
# Knobs: NGPU (default: all), SIZES (ccltune form, default 1KiB:64MiB:4), DTYPE (bf16),
# REPEAT (alternating runs per mode, default 3; the median is shown), WINNERS (an existing
# export to use instead of tuning), OUT (default ./plugin-out: the table, the export, the
# tune log and the first run's logs), EXTRA (all_reduce_perf args), PLUGIN_ENV (more
# VAR=value settings for the runs with the plugin only, e.g. NCCL_MIN_CTAS=32, which is also
# passed to the exports as --min-ctas so the table shows what the plugin applies), SOURCE
# (file: CCLTUNE_RESULTS_FILE, the default; redis: a redis-server started here holds the
# results and the plugin reads CCLTUNE_REDIS_URL), TUNE_ARGS (more `ccltune tune` flags,
# e.g. --choices, for a job whose winners are NCCL's own), TUNE_ENV (VAR=value settings for
# the tune only, e.g. CCLTUNE_PEER_MEMORY=0: a job where ranks cannot share memory, so
# NCCL-internal choices win where nccl-symm does not).
set -uo pipefail
own_out=${OUT:-}  # device_env.sh sets OUT=gpu-out/ where unset; this script keeps its own default
[ -n "${BUNDLE:-}" ] && export CCLTUNE_GPU_BUNDLE=${CCLTUNE_GPU_BUNDLE:-$BUNDLE}
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../gpu/device_env.sh"
perf=${NCCL_TESTS_DIR:-}/all_reduce_perf
[ -x "$perf" ] || { echo "set NCCL_TESTS_DIR to the folder holding all_reduce_perf"; exit 2; }
plugin=$(realpath -m "$(gpu_file libnccl-tuner-ccltune.so)")
[ -f "$plugin" ] || { echo "no $plugin: build ccltune_nccl_tuner (see header)"; exit 2; }
NGPU=${NGPU:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
SIZES=${SIZES:-1KiB:64MiB:4}
DTYPE=${DTYPE:-bf16}
REPEAT=${REPEAT:-3}
OUT=${own_out:-$PWD/plugin-out}
W=$(mktemp -d)  # every run's files; the ones worth keeping are copied to $OUT at the end
mkdir -p "$OUT"
keep() { cp "$@" "$OUT/" 2>/dev/null; }
keep_all() { keep "$W/table.md" "$W/tune.log" "$W/winners.json" "$W/winners.csv" "$W/applied.json" "$W/default.1.txt" "$W/plugin.1.txt" "$W/plugin.debug.txt"; }
trap keep_all EXIT
declare -A nccl_type=([bf16]=bfloat16 [fp16]=half [fp32]=float [int32]=int32 [int8]=int8)
min=${SIZES%%:*}; rest=${SIZES#*:}; max=${rest%%:*}; factor=${rest#*:}
to_b() { echo "$1" | sed -e 's/KiB$/K/' -e 's/MiB$/M/' -e 's/GiB$/G/'; }
# What the plugin runs will see of NCCL_MIN_CTAS and CCLTUNE_PLUGIN_DTYPE, for the exports.
plugin_flags=()
for kv in ${PLUGIN_ENV:-}; do
  case $kv in
    NCCL_MIN_CTAS=*) plugin_flags+=(--min-ctas "${kv#NCCL_MIN_CTAS=}") ;;
    CCLTUNE_PLUGIN_DTYPE=*) plugin_flags+=(--dtype "${kv#CCLTUNE_PLUGIN_DTYPE=}") ;;
  esac
done

winners=${WINNERS:-$W/winners.json}
cache=(--cache-dir "$W/cache")
source_env=(CCLTUNE_RESULTS_FILE="$winners")
if [ "${SOURCE:-file}" = redis ]; then
  port=16379
  redis-server --port $port --bind 127.0.0.1 --save "" --dir "$W" --daemonize yes \
    --logfile "$W/redis.log" || exit 1
  trap 'redis-cli -p '$port' shutdown nosave >/dev/null 2>&1; keep_all' EXIT
  cache=(--redis "redis://127.0.0.1:$port/0")
  source_env=(CCLTUNE_REDIS_URL="redis://127.0.0.1:$port/0")
fi
if [ -z "${WINNERS:-}" ]; then
  echo "== ccltune tune: allReduce $DTYPE $SIZES on $NGPU GPUs"
  # shellcheck disable=SC2086
  env ${TUNE_ENV:-} timeout 360 ccltune tune --backend nccl --ranks "$NGPU" --op allReduce \
    --dtypes "$DTYPE" --sizes "$SIZES" "${cache[@]}" --json "$W/tune.json" ${TUNE_ARGS:-} \
    >"$W/tune.log" 2>&1 \
    || { tail -30 "$W/tune.log"; exit 1; }
  tail -15 "$W/tune.log"
  fp=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('fingerprint',''))" "$W/tune.json")
  timeout 60 ccltune export --format json "${cache[@]}" ${fp:+--fingerprint "$fp"} \
    --output "$winners" || exit 1
fi
# From the exported file, as the plugin reads it; the same rule and flags as the plugin runs.
timeout 60 ccltune export --format nccl-tuner-csv --results-file "$winners" \
  ${plugin_flags[@]+"${plugin_flags[@]}"} --output "$W/winners.csv" || exit 1
timeout 60 ccltune export --format applied-json --results-file "$winners" \
  ${plugin_flags[@]+"${plugin_flags[@]}"} --output "$W/applied.json" || exit 1

args=(-b "$(to_b "$min")" -e "$(to_b "$max")" -f "$factor" -g 1 -t "$NGPU"
      -d "${nccl_type[$DTYPE]}" -w 5 -n 20 -c 0 ${EXTRA:-})
for i in $(seq 1 "$REPEAT"); do  # alternate, so drift hits both modes alike
  echo "== run $i: NCCL default"
  timeout 60 "$perf" "${args[@]}" >"$W/default.$i.txt" 2>&1 || { tail "$W/default.$i.txt"; exit 1; }
  echo "== run $i: with the ccltune plugin"
  env ${PLUGIN_ENV:-} "${source_env[@]}" NCCL_TUNER_PLUGIN=$plugin timeout 60 "$perf" "${args[@]}" \
    >"$W/plugin.$i.txt" 2>&1 || { tail "$W/plugin.$i.txt"; exit 1; }
done
# One untimed run with NCCL's log (kept apart from the timed ones: logging every call costs
# time): the plugin is loaded, finds the winners, and NCCL's per-call choice follows them.
echo "== NCCL's log with the plugin (1 iteration per size)"
env ${PLUGIN_ENV:-} "${source_env[@]}" NCCL_TUNER_PLUGIN=$plugin NCCL_DEBUG=INFO \
  NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL_DEBUG_FILE=$W/nccl.%p.log timeout 60 "$perf" \
  "${args[@]}" -w 0 -n 1 >/dev/null 2>&1
cat "$W"/nccl.*.log >"$W/plugin.debug.txt" 2>/dev/null
grep -m1 "TUNER/Plugin: Using" "$W/plugin.debug.txt" || echo "WARNING: NCCL did not report loading the plugin"
grep -m2 "ccltune tuner:" "$W/plugin.debug.txt" || echo "WARNING: the plugin logged nothing"
grep -E "AllReduce: [0-9]+ Bytes -> Algo" "$W/plugin.debug.txt" | sed 's/.*AllReduce/AllReduce/' | sort -u -t' ' -k2,2n | head -20

python3 - "$W/applied.json" "$W" "$REPEAT" <<'PY' | tee "$W/table.md"
import json, math, statistics, sys
applied, out, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
sizes = {e["bytes"]: e for e in json.load(open(applied))["sizes"] if e["op"] == "allReduce"}
def times(mode):
    per = {}
    for i in range(1, repeat + 1):
        for line in open(f"{out}/{mode}.{i}.txt"):
            f = line.split()
            if len(f) >= 13 and f[0].isdigit() and f[1].isdigit():
                try:
                    per.setdefault(int(f[0]), []).append(float(f[5]))  # out-of-place (us)
                except ValueError:
                    pass
    return {b: statistics.median(v) for b, v in per.items()}
base, plug = times("default"), times("plugin")
def nearest(b):  # the plugin's lookup: nearest in log2, ties to the larger size
    return min(sizes, key=lambda t: (abs(math.log2(t / b)), -t)) if sizes else None
def pct(x):
    return f"{x:+.1f}%" if x is not None else "n/a"
print("| bytes | ccltune winner | applied by the plugin | applied's ccltune (us) | NCCL default (us) "
      "| with plugin (us) | plugin vs default | plugin vs applied |")
print("|---:|---|---|---:|---:|---:|---:|---:|")
worst_d = worst_a = None
for b in sorted(base):
    e = sizes.get(nearest(b), {}) if sizes else {}
    w, a, at = e.get("winner", "-"), e.get("applied", ""), e.get("appliedTimeUs")
    p, d = plug.get(b), base[b]
    vs_d = (p / d - 1) * 100 if p else None
    vs_a = (p / at - 1) * 100 if p and a and at else None  # n/a: NCCL left alone
    worst_d = vs_d if worst_d is None or (vs_d is not None and vs_d > worst_d) else worst_d
    worst_a = vs_a if worst_a is None or (vs_a is not None and vs_a > worst_a) else worst_a
    shown = a if a else "NCCL's own (winner not selectable)"
    at_s = f"{at:.2f}" if a and at else "-"
    p_s = f"{p:.2f}" if p else "-"
    print(f"| {b} | {w} | {shown} | {at_s} | {d:.2f} | {p_s} | {pct(vs_d)} | {pct(vs_a)} |")
print(f"| worst | | | | | | {pct(worst_d)} | {pct(worst_a)} |")
print(f"\nworst plugin vs default: {pct(worst_d)} (bar: <= +3%); worst plugin vs the applied "
      f"choice's ccltune time: {pct(worst_a)}; median of {repeat} runs each")
PY
