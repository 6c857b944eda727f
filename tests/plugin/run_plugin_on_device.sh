#!/bin/bash
# On a GPU machine: tunes allReduce with ccltune, exports the winners, then runs an
# unmodified nccl-tests all_reduce_perf without and with NCCL_TUNER_PLUGIN pointing at
# libnccl-tuner-ccltune.so (CCLTUNE_RESULTS_FILE = the export), and prints a side-by-side
# table: per size the winner, ccltune's measured time, NCCL's default and the plugin's.
#
# Here (build machine), once:
#   cmake --build build-plugin -j2 --target ccltune ccltune_nccl_tuner ccltune_inproc_tuner
#   /work/shared/tools/bundle-for-gpu.sh .gpu build-plugin/worker/ccltune \
#       build-plugin/worker/libccltune-inproc-tuner.so build-plugin/plugin/libnccl-tuner-ccltune.so
# There (repo root, .gpu/ carried, nccl-tests built):
#   NCCL_TESTS_DIR=/path/to/nccl-tests/build bash tests/plugin/run_plugin_on_device.sh
# BUNDLE=DIR uses a bundle in another folder than .gpu (e.g. .gpu/plugin).
# Knobs: NGPU (default: all), SIZES (ccltune form, default 1KiB:64MiB:4), DTYPE (bf16),
# REPEAT (alternating runs per mode, default 3; the median is shown), WINNERS (an existing
# export to use instead of tuning), OUT (default ./plugin-out: the table, the export, the
# tune log and the first run's logs), EXTRA (all_reduce_perf args), PLUGIN_ENV (more
# VAR=value settings for the runs with the plugin only, e.g. NCCL_MIN_CTAS=32), SOURCE
# (file: CCLTUNE_RESULTS_FILE, the default; redis: a redis-server started here holds the
# results and the plugin reads CCLTUNE_REDIS_URL).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
BUNDLE=${BUNDLE:-.gpu}
[ -f "$BUNDLE/env.sh" ] || { echo "no $BUNDLE/env.sh: bundle first (see header)"; exit 2; }
# shellcheck disable=SC1090
source "$BUNDLE/env.sh"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
perf=${NCCL_TESTS_DIR:-}/all_reduce_perf
[ -x "$perf" ] || { echo "set NCCL_TESTS_DIR to the folder holding all_reduce_perf"; exit 2; }
plugin=$(cd "$BUNDLE" && pwd)/bin/libnccl-tuner-ccltune.so
[ -f "$plugin" ] || { echo "no $plugin in the bundle"; exit 2; }
NGPU=${NGPU:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
SIZES=${SIZES:-1KiB:64MiB:4}
DTYPE=${DTYPE:-bf16}
REPEAT=${REPEAT:-3}
OUT=${OUT:-$PWD/plugin-out}
W=$(mktemp -d)  # every run's files; the ones worth keeping are copied to $OUT at the end
mkdir -p "$OUT"
keep() { cp "$@" "$OUT/" 2>/dev/null; }
trap 'keep "$W/table.md" "$W/tune.log" "$W/winners.json" "$W/winners.csv" "$W/default.1.txt" "$W/plugin.1.txt" "$W/plugin.debug.txt"' EXIT
declare -A nccl_type=([bf16]=bfloat16 [fp16]=half [fp32]=float [int32]=int32 [int8]=int8)
min=${SIZES%%:*}; rest=${SIZES#*:}; max=${rest%%:*}; factor=${rest#*:}
to_b() { echo "$1" | sed -e 's/KiB$/K/' -e 's/MiB$/M/' -e 's/GiB$/G/'; }

winners=${WINNERS:-$W/winners.json}
cache=(--cache-dir "$W/cache")
source_env=(CCLTUNE_RESULTS_FILE="$winners")
if [ "${SOURCE:-file}" = redis ]; then
  port=16379
  redis-server --port $port --bind 127.0.0.1 --save "" --dir "$W" --daemonize yes \
    --logfile "$W/redis.log" || exit 1
  trap 'redis-cli -p '$port' shutdown nosave >/dev/null 2>&1; keep "$W/table.md" "$W/tune.log" "$W/winners.json" "$W/winners.csv" "$W/default.1.txt" "$W/plugin.1.txt" "$W/plugin.debug.txt"' EXIT
  cache=(--redis "redis://127.0.0.1:$port/0")
  source_env=(CCLTUNE_REDIS_URL="redis://127.0.0.1:$port/0")
fi
if [ -z "${WINNERS:-}" ]; then
  echo "== ccltune tune: allReduce $DTYPE $SIZES on $NGPU GPUs"
  timeout 360 ccltune tune --backend nccl --ranks "$NGPU" --op allReduce --dtypes "$DTYPE" \
    --sizes "$SIZES" "${cache[@]}" --json "$W/tune.json" >"$W/tune.log" 2>&1 \
    || { tail -30 "$W/tune.log"; exit 1; }
  tail -15 "$W/tune.log"
  fp=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('fingerprint',''))" "$W/tune.json")
  timeout 60 ccltune export --format json "${cache[@]}" ${fp:+--fingerprint "$fp"} \
    --output "$winners" || exit 1
  timeout 60 ccltune export --format nccl-tuner-csv "${cache[@]}" \
    ${fp:+--fingerprint "$fp"} --output "$W/winners.csv" || exit 1
fi

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

python3 - "$winners" "$W" "$REPEAT" <<'PY' | tee "$W/table.md"
import json, statistics, sys
winners, out, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
recs = {r["bytes"]: r for r in json.load(open(winners)) if r["op"] == "allReduce"}
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
def nearest(b):
    return min(recs, key=lambda t: (abs(__import__("math").log2(t / b)), -t)) if recs else None
print("| bytes | ccltune winner | ccltune (us) | NCCL default (us) | with plugin (us) | plugin vs default | plugin vs ccltune |")
print("|---:|---|---:|---:|---:|---:|---:|")
worst = 0.0
for b in sorted(base):
    r = recs.get(nearest(b), {}) if recs else {}
    w, ct = r.get("winner", "-"), r.get("timeUs")
    p, d = plug.get(b), base[b]
    vs_d = (p / d - 1) * 100 if p else float("nan")
    internal = w == "nccl" or w.startswith("nccl:")
    vs_c = f"{(p / ct - 1) * 100:+.1f}%" if p and ct and internal else "n/a"
    worst = max(worst, vs_d)
    print(f"| {b} | {w} | {ct if ct else '-':>8} | {d:.2f} | {p:.2f} | {vs_d:+.1f}% | {vs_c} |")
print(f"\nworst plugin vs default: {worst:+.1f}% (bar: <= +3%); median of {repeat} runs each")
PY
