#!/bin/bash
# Issue 6 on a GPU machine: our peer kernels' correctness (every redop, dtype, odd sizes,
# eager and graph; a rank that never arrives), compute-sanitizer on a small case, and the
# side-by-side benchmark: `ccltune tune` (every choice, allReduce bf16 1 KiB-64 MiB, graph
# and eager) against PyTorch's symmetric-memory one-shot/two-shot, same machine, same run.
#
# On the GPU machine, from the repository root (a bundle instead of build/: device_env.sh):
#   make build        (or: cmake --build build --target ccltune ccltune_inproc_tuner \
#                      nccl_choices_gpu_test nccl_failure_gpu_test)
#   bash tests/gpu/own_kernels_on_device.sh [section...]
# Sections (default: bench4 correct4 sanitize2 bench2 correct2):
#   benchN    tune graph+eager on N GPUs, torch_symm_bench.py, own_kernels_table.py
#   correctN  the peer-kernel correctness tests on N GPUs
#   sanitize2 memcheck and racecheck of a small peer-kernel case on 2 GPUs
#   exploreN  a wide peer-kernel grid (graph, 64 KiB-64 MiB) beside torch on N GPUs
#   abN       this build against $CCLTUNE_AB_BIN, alternating, same choices (graph)
# Writes $OUT/own-kernels.md. NVLink multicast stays off in every process.
set -uo pipefail
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
report=$OUT/own-kernels.md
budget=${CCLTUNE_GPU_BUDGET_S:-570}
t0=$(date +%s)
left() { echo $((budget - ($(date +%s) - t0))); }
log() { echo "$*" | tee -a "$report"; }
touch "$report"  # sections may run as separate invocations: append
log "# own kernels on $(hostname), $(date -u +%FT%TZ)"
nvidia-smi -L | sed 's/^/    /' | tee -a "$report"

timed() {  # timed <label> <limit s> <cmd...>: runs, logs exit code and wall time
  local label=$1 limit=$2 rc s e
  shift 2
  [ "$(left)" -le 15 ] && { log "- $label: not run (time budget spent)"; return; }
  [ "$limit" -gt "$(left)" ] && limit=$(left)
  s=$(date +%s.%N)
  timeout -k 5 "$limit" "$@"
  rc=$?
  e=$(date +%s.%N)
  log "- $label: exit $rc, $(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.1f", b-a}') s"
}

# PyTorch's symmetric-memory one-/two-shot on the same GPUs (the comparison's other side).
torch_bench() {  # torch_bench <n> <gpus csv>
  local n=$1 gpus=$2
  CUDA_VISIBLE_DEVICES=$gpus timed "torch$n: torch_symm_bench.py --gpus $n" 200 \
    python3 tests/gpu/torch_symm_bench.py --gpus "$n" --json "$OUT/torch$n.json" \
    --timeout-s 180 >"$OUT/torch$n.txt" 2>&1
}

bench() {  # bench <n>
  local n=$1 gpus
  gpus=$(seq -s, 0 $((n - 1)))
  for mode in graph eager; do
    local flag=""
    [ "$mode" = graph ] && flag=--cuda-graph
    CUDA_VISIBLE_DEVICES=$gpus timed "tune $mode$n: ccltune tune --ranks $n --op allReduce --dtypes bf16 --sizes 1KiB:64MiB:2 $flag ${CCLTUNE_BENCH_ARGS:-}" 240 \
      ccltune tune --backend nccl --ranks "$n" --op allReduce --dtypes bf16 --sizes 1KiB:64MiB:2 \
      $flag --json "$OUT/$mode$n.json" ${CCLTUNE_BENCH_ARGS:-} >"$OUT/$mode$n.txt" 2>&1
  done
  torch_bench "$n" "$gpus"
  python3 tests/gpu/own_kernels_table.py "$OUT" --gpus "$n" >>"$report" 2>&1
}

# A wider grid than the catalog's, graph mode, where the own kernels compete (64 KiB to
# 64 MiB), beside torch: picks the catalog's grids. $OUT/exploreN.json has every choice.
explore() {  # explore <n>
  local n=$1 gpus list="" b t m u
  gpus=$(seq -s, 0 $((n - 1)))
  for b in 16 32 64 128 256; do for t in 256 512; do for m in pull push; do for u in 1 2; do
    list+="twoshot:blocks=$b,threads=$t,mode=$m,unroll=$u,"
  done; done; done; done
  for b in 32 64 128; do for m in pull push; do for u in 1 2; do
    list+="oneshot:blocks=$b,threads=256,mode=$m,unroll=$u,"
  done; done; done
  CUDA_VISIBLE_DEVICES=$gpus timed "explore$n: ccltune tune --ranks $n (wide peer grid) --cuda-graph" 240 \
    ccltune tune --backend nccl --ranks "$n" --op allReduce --dtypes bf16 --sizes 64KiB:64MiB:2 \
    --cuda-graph --choices "nccl,${CCLTUNE_EXPLORE_CHOICES:-${list%,}}" --json "$OUT/explore$n.json" \
    >"$OUT/explore$n.txt" 2>&1
  torch_bench "$n" "$gpus"
}

# This build against another one ($CCLTUNE_AB_BIN, e.g. the previous commit's ccltune in
# the bundle), alternating, same choices and sizes (graph): kernel changes are judged side
# by side in one run, never against figures from another day.
ab() {  # ab <n>
  local n=$1 gpus bin i
  gpus=$(seq -s, 0 $((n - 1)))
  [ -x "${CCLTUNE_AB_BIN:-}" ] || { log "- ab$n: set CCLTUNE_AB_BIN to another ccltune"; return; }
  local choices=${CCLTUNE_AB_CHOICES:-oneshot:blocks=16,threads=256,mode=ll,oneshot:blocks=64,threads=256,mode=pull,oneshot:blocks=32,threads=256,mode=push,twoshot:blocks=16,threads=256,mode=pull,unroll=2,twoshot:blocks=32,threads=256,mode=pull,unroll=2,twoshot:blocks=64,threads=256,mode=pull,unroll=2,twoshot:blocks=128,threads=256,mode=push,unroll=2}
  for i in 1 2; do
    for bin in "$CCLTUNE_AB_BIN" ccltune; do
      local tag=new
      [ "$bin" = ccltune ] || tag=old
      CUDA_VISIBLE_DEVICES=$gpus timed "ab$n $tag $i: $bin tune --ranks $n --cuda-graph" 120 \
        "$bin" tune --backend nccl --ranks "$n" --op allReduce --dtypes bf16 \
        --sizes 64KiB:16MiB:4 --cuda-graph --choices "nccl,$choices" \
        --json "$OUT/ab$n-$tag-$i.json" >"$OUT/ab$n-$tag-$i.txt" 2>&1
    done
  done
}

correct() {  # correct <n>
  local n=$1 gpus
  gpus=$(seq -s, 0 $((n - 1)))
  CUDA_VISIBLE_DEVICES=$gpus CCLTUNE_GPU_SUMMARY_DIR="$OUT" timed "peer kernels correct, $n GPUs" 300 \
    "$(gpu_file nccl_choices_gpu_test)" --gtest_filter='*PeerKernels*' >"$OUT/correct$n.log" 2>&1
  grep -E "ok, .* skipped|FAILED|Failure" "$OUT/correct$n.log" | head -20 | tee -a "$report"
  CUDA_VISIBLE_DEVICES=$gpus CCLTUNE_GPU_SUMMARY_DIR="$OUT" timed "absent rank, $n GPUs" 120 \
    "$(gpu_file nccl_failure_gpu_test)" --gtest_filter='*Absent*' >"$OUT/absent$n.log" 2>&1
  grep -E "test-absent ->|recover ->|OK \]|FAILED" "$OUT/absent$n.log" | tee -a "$report"
}

sanitize() {
  local tool cs=/usr/local/cuda/bin/compute-sanitizer
  [ -x "$cs" ] || cs=$(command -v compute-sanitizer)
  for tool in memcheck racecheck; do
    # NCCL probes kernel images with cudaFuncGetAttributes and expects some to be missing:
    # those API errors are NCCL's, not ours, so API error reports stay off.
    CUDA_VISIBLE_DEVICES=0,1 CCLTUNE_GPU_TEST_QUICK=1 \
      CCLTUNE_GPU_TEST_CHOICES='oneshot:blocks=2,threads=64,mode=pull;oneshot:blocks=2,threads=64,mode=push;oneshot:blocks=2,threads=64,mode=ll;twoshot:blocks=2,threads=64,mode=pull;twoshot:blocks=2,threads=64,mode=push;twoshot:blocks=2,threads=64,mode=pull,unroll=2;oneshot:blocks=2,threads=64,mode=push,unroll=2;p2p:blocks=2,threads=64,mode=push;p2p:blocks=2,threads=64,mode=pull,unroll=2;ce:mode=pull' \
      timed "compute-sanitizer --tool $tool (2 GPUs, 3078 B, bf16 sum)" 150 \
      "$cs" --tool "$tool" --report-api-errors no --target-processes all --error-exitcode 9 \
      "$(gpu_file nccl_choices_gpu_test)" --gtest_filter='*PeerKernels*' >"$OUT/sanitize-$tool.log" 2>&1
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid|ok, .* skipped" "$OUT/sanitize-$tool.log" |
      sort | uniq -c | head -12 | tee -a "$report"
  done
}

for s in ${*:-bench4 correct4 sanitize2 bench2 correct2}; do
  case $s in
    bench*) bench "${s#bench}" ;;
    explore*) explore "${s#explore}" ;;
    ab*) ab "${s#ab}" ;;
    correct*) correct "${s#correct}" ;;
    sanitize2) sanitize ;;
    *) log "unknown section $s" ;;
  esac
done
echo "report: $report"
