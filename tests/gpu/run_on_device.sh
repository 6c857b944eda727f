#!/bin/bash
# Runs the GPU test suite of the NCCL backend on a GPU machine and leaves a summary table.
#
# On the GPU machine, from the repository root (a bundle instead of build/: device_env.sh):
#   make build        (or: cmake --build build --target nccl_choices_gpu_test \
#                      nccl_failure_gpu_test nccl_bench_gpu_test nccl_inproc_tuner_test \
#                      ccltune_inproc_tuner)
#   bash tests/gpu/run_on_device.sh
#
# Runs every test on 4 GPUs (CUDA_VISIBLE_DEVICES=0,1,2,3) when present, then on 2 (0,1);
# CCLTUNE_GPU_COUNTS="8" (or "8 4 2") picks other world sizes.
# Writes $OUT/summary.md (one row per test run, then each test's own tables) and
# $OUT/logs.txt. NVLink multicast stays off in every process (the machines are shared).
# Knobs: CCLTUNE_GPU_TEST_MAX_BYTES (largest message, default all sizes up to 256 MiB),
# CCLTUNE_GPU_TEST_FILTER (gtest filter, default all), CCLTUNE_GPU_TEST_TIMEOUT (s per run).
set -uo pipefail
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
summary=$OUT/summary.md
logs=$OUT/logs.txt
details=$(mktemp -d)
filter=${CCLTUNE_GPU_TEST_FILTER:-*}
per_run_timeout=${CCLTUNE_GPU_TEST_TIMEOUT:-400}
# The whole script stays inside this many seconds (a remote run may be stopped at 600).
budget=${CCLTUNE_GPU_BUDGET_S:-560}
t0=$(date +%s)
left() {  # seconds left of the budget, at most $1
  local l=$((budget - ($(date +%s) - t0)))
  [ "$l" -gt "$1" ] && l=$1
  echo "$l"
}
# Each finished run's tables go to details.md at once, so a run cut short keeps them.
flush_details() {  # flush_details <n>
  local f
  for f in "$details/$1"/*.md; do
    [ -e "$f" ] || continue
    { echo; cat "$f"; } >>"$OUT/details.md"
    rm -f "$f"
  done
}

visible=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
{
  echo "# ccltune NCCL backend on $(hostname)"
  echo
  echo "$(nvidia-smi -L 2>/dev/null | head -8 | sed 's/^/    /')"
  echo "    NCCL loaded: $(ldd "$(gpu_file nccl_choices_gpu_test)" 2>/dev/null | grep -o '/[^ ]*libnccl[^ ]*' | head -1)"
  echo "    NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE; date $(date -u +%FT%TZ)"
  echo
  echo "| GPUs | test | result | seconds |"
  echo "|---|---|---|---|"
} >"$summary"
: >"$logs"
: >"$OUT/details.md"

run_one() {  # run_one <gpus csv> <n> <binary>
  local gpus=$1 n=$2 bin=$3 rc start end limit
  mkdir -p "$details/$n"
  limit=$(left "$per_run_timeout")
  if [ "$limit" -le 10 ]; then
    echo "| $n | $bin | not run: time budget spent | 0 |" >>"$summary"
    return
  fi
  start=$(date +%s.%N)
  CUDA_VISIBLE_DEVICES=$gpus CCLTUNE_GPU_SUMMARY_DIR="$details/$n" \
    timeout -k 5 "$limit" "$(gpu_file "$bin")" --gtest_filter="$filter" \
    >"$details/$n/$bin.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  local verdict="PASS"
  [ $rc -ne 0 ] && verdict="FAIL (rc $rc)"
  grep -q '^\[  SKIPPED \] [0-9]' "$details/$n/$bin.log" && [ $rc -eq 0 ] && verdict="PASS (with skips)"
  printf '| %s | %s | %s | %.1f |\n' "$n" "$bin" "$verdict" "$(awk -v a="$start" -v b="$end" 'BEGIN{print b-a}')" >>"$summary"
  { echo "===== $bin on $n GPUs ($gpus): rc $rc"; cat "$details/$n/$bin.log"; } >>"$logs"
  flush_details "$n"
}

# nccl-tests built outside the repository, when in $NCCL_TESTS_BIN: the reference
# the `nccl` choice's busbw is compared with (same sizes, bf16, max over ranks).
run_nccl_tests() {  # run_nccl_tests <gpus csv> <n>
  local gpus=$1 n=$2 op mode extra
  [ -x "$NCCL_TESTS_BIN/all_reduce_perf" ] || return 0
  mkdir -p "$details/$n"
  for op in all_reduce all_gather reduce_scatter; do
    for mode in eager graph; do
      extra=""
      [ "$mode" = graph ] && extra="-G 20"
      [ "$(left 60)" -le 20 ] && continue
      {
        echo "## nccl-tests ${op}_perf, bf16, $mode, $n GPUs (-t $n -g 1 -w 5 -n 20 -a 3 $extra)"
        echo
        echo '```'
        CUDA_VISIBLE_DEVICES=$gpus timeout -k 5 "$(left 60)" "$NCCL_TESTS_BIN/${op}_perf" -b 1K -e 256M -f 2 \
          -d bfloat16 -t "$n" -g 1 -w 5 -n 20 -a 3 -c 0 $extra 2>&1 | grep -v '^#  *Rank\|^# Using devices'
        echo '```'
      } >"$details/$n/nccl-tests-$op-$mode.md"
      flush_details "$n"
    done
  done
}

# Larger first: if the run is cut short, the larger configuration is the one we have.
for n in ${CCLTUNE_GPU_COUNTS:-4 2}; do
  if [ "$visible" -lt "$n" ]; then
    echo "| $n | (all) | not run: $visible GPU(s) visible | 0 |" >>"$summary"
    continue
  fi
  gpus=$(seq -s, 0 $((n - 1)))
  for bin in nccl_inproc_tuner_test nccl_failure_gpu_test nccl_bench_gpu_test nccl_choices_gpu_test; do
    [ -x "$(gpu_file "$bin")" ] && run_one "$gpus" "$n" "$bin"
  done
  run_nccl_tests "$gpus" "$n"
done

[ -f "$OUT/details.md" ] && cat "$OUT/details.md" >>"$summary"
rm -rf "$details"
echo "summary: $summary"
if grep -q 'FAIL' "$summary"; then exit 1; fi
