#!/bin/bash
# libccltune on a GPU machine (issue 15). Sections (any order, default: gpu torch):
#   gpu        runtime_gpu_test: the C API against NCCL on every path, fallbacks, bad
#              config, an absent peer (2+ GPUs); all visible GPUs
#   torch      runtime_torch_check.py: ccltune.torch's ops against torch.distributed, eager,
#              CUDA graph and torch.compile; all visible GPUs
#   benchN     N GPUs: `ccltune tune` (bf16 allReduce 1 KiB-64 MiB x2, graph and eager) and
#              in the same call torch_symm_bench.py with the runtime's op on those winners,
#              NCCL and torch's one/two-shot: runtime_vs_tune.py prints the side-by-side table
#   decodeN    N GPUs: tp_decode_bench.py, a Llama-3-8B-shaped TP decode step, NCCL vs runtime
#   compile    compile_pass_check.py (issue 23): ccltune.torch.enable()'s Inductor pass on one
#              GPU, world size 1 (needs only libccltune); $OUT/compile-pass.json,
#              $OUT/graphs.txt (each graph before and after the pass)
#   compileN   N GPUs: compile_pass_multi.py, enable()'s pooled slots across N ranks with the
#              runtime test's winners (needs runtime_winners_file)
#   trialshare runtime_gpu_test's in-program trial tests with 2 ranks sharing GPU 0 as two
#              emulated nodes (CCLTUNE_GPU_TEST_SHARE_GPU=2): every eager case against NCCL,
#              the verdicts alike on both ranks; NCCL over sockets, no peer memory (one GPU)
#
# On the GPU machine, from the repository root (a bundle instead of build/: device_env.sh):
#   make build        (or: cmake --build build --target ccltune runtime_gpu_test \
#                      runtime_bench runtime_winners_file ccltune_runtime ccltune_inproc_tuner)
#   bash tests/gpu/runtime_on_device.sh gpu torch bench4 decode4
# Output: $OUT/runtime-*.log and the tables on stdout.
set -uo pipefail
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
export PYTHONPATH="$PWD/runtime/python${PYTHONPATH:+:$PYTHONPATH}"
CCLTUNE_LIBRARY=$(gpu_file libccltune.so.0)
export CCLTUNE_LIBRARY
budget=${CCLTUNE_GPU_BUDGET_S:-560}
t0=$(date +%s)
left() { echo $((budget - ($(date +%s) - t0))); }
visible=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
devices() { seq -s, 0 $(($1 - 1)); }

section_gpu() {  # the absent-peer case alone, under its own short bound
  local rc
  timeout -k 5 "$(left)" "$(gpu_file runtime_gpu_test)" --gtest_filter=-*AbsentPeer* 2>&1 |
    tee "$OUT/runtime-gpu.log" | grep -v "^WRONG\|^FAILED" | tail -30
  rc=${PIPESTATUS[0]}
  grep -c "^WRONG" "$OUT/runtime-gpu.log" | sed 's/^/wrong cases (all ranks): /'
  timeout -k 5 60 "$(gpu_file runtime_gpu_test)" --gtest_filter=*AbsentPeer* 2>&1 |
    tee -a "$OUT/runtime-gpu.log" | grep "init without\|OK\|FAILED\|SKIP" | head
  [ "${PIPESTATUS[0]}" -eq 0 ] && [ "$rc" -eq 0 ]
}

section_torch() {
  timeout -k 5 "$(left)" python3 tests/gpu/runtime_torch_check.py --gpus "$visible" 2>&1 |
    tee "$OUT/runtime-torch.log" | grep -v Warning | tail -20
}

# The NCCL PyTorch loads (its own wheel's): `ccltune tune` must tune with the NCCL the
# application runs, or the fingerprints differ and the runtime (rightly) finds no winners.
torch_nccl_dir() {
  python3 -c 'import os, nvidia.nccl as n; print(os.path.join(list(n.__path__)[0], "lib"))' 2>/dev/null
}

section_bench() {  # section_bench <gpus>
  local n=$1 cache=/tmp/ccltune-runtime-bench nccl_dir
  [ "$visible" -ge "$n" ] || { echo "bench$n: only $visible GPUs"; return; }
  export CUDA_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES=$(devices "$n")
  nccl_dir=$(torch_nccl_dir)
  echo "tuning with the NCCL in ${nccl_dir:-the system (torch brings none)}"
  rm -rf "$cache"
  for mode in graph eager; do
    local flag=""
    [ $mode = graph ] && flag=--cuda-graph
    LD_LIBRARY_PATH="${nccl_dir:+$nccl_dir:}$LD_LIBRARY_PATH" timeout -k 5 "$(left)" ccltune tune --ranks "$n" --op allReduce --dtypes bf16 \
      --sizes 1KiB:64MiB:2 $flag --cache-dir "$cache-$mode" --json "$OUT/tune$n-$mode.json" \
      >"$OUT/tune$n-$mode.log" 2>&1
    ccltune export --format json --cache-dir "$cache-$mode" -o "$OUT/winners$n-$mode.json"
  done
  timeout -k 5 "$(left)" python3 tests/gpu/torch_symm_bench.py --gpus "$n" \
    --ccltune-winners "$OUT/winners$n-graph.json,$OUT/winners$n-eager.json" \
    --json "$OUT/bench$n.json" >"$OUT/bench$n.log" 2>&1
  python3 tests/gpu/runtime_vs_tune.py "$OUT/bench$n.json" "$OUT/winners$n-graph.json" \
    "$OUT/winners$n-eager.json" | tee "$OUT/runtime-bench$n.md"
  # Like for like with tune: the C API timed as tune times a choice (runtime_bench.cc).
  for mode in graph eager; do
    local g=""
    [ $mode = graph ] && g=--graph
    LD_LIBRARY_PATH="${nccl_dir:+$nccl_dir:}$LD_LIBRARY_PATH" timeout -k 5 "$(left)" \
      "$(gpu_file runtime_bench)" "$OUT/winners$n-$mode.json" $g --gpus "$n" | tee -a "$OUT/runtime-bench$n.md"
  done
  unset CUDA_VISIBLE_DEVICES
}

section_decode() {  # section_decode <gpus>
  local n=$1
  [ "$visible" -ge "$n" ] || { echo "decode$n: only $visible GPUs"; return; }
  CUDA_VISIBLE_DEVICES=$(devices "$n") timeout -k 5 "$(left)" python3 tests/gpu/tp_decode_bench.py \
    --gpus "$n" --winners "$OUT/winners$n-graph.json" 2>&1 | tee "$OUT/runtime-decode$n.md" | tail -20
}

section_compile() {
  CUDA_VISIBLE_DEVICES=0 timeout -k 5 "$(left)" python3 tests/gpu/compile_pass_check.py \
    --out "$OUT" --budget $(($(left) - 40)) 2>&1 | tee "$OUT/compile-pass.log" |
    grep -v "Warning\|warn(" | grep "^PASSED\|^FAILED\|^NOT RUN\|^compile_pass_check\|^torch\|SKIP"
}

section_compile_multi() {  # compileN
  "$(gpu_file runtime_winners_file)" "$1" /tmp/ccltune-winners-$1.json >/dev/null &&
    timeout -k 5 "$(left)" python3 tests/gpu/compile_pass_multi.py --ranks "$1" \
      --winners /tmp/ccltune-winners-$1.json --fingerprint runtime-gpu-test \
      --out "$OUT/compile-multi" 2>&1 | tee "$OUT/compile-multi.log" | grep "^rank\|SKIP"
}

section_trialshare() {
  CUDA_VISIBLE_DEVICES=0 CCLTUNE_GPU_TEST_SHARE_GPU=2 timeout -k 5 "$(left)" \
    "$(gpu_file runtime_gpu_test)" --gtest_filter='*InProgramTrial*' 2>&1 |
    tee "$OUT/runtime-trialshare.log" | grep -v "^WRONG" | tail -40
  local rc=${PIPESTATUS[0]}
  grep -c "^WRONG" "$OUT/runtime-trialshare.log" | sed 's/^/wrong cases (all ranks): /'
  return "$rc"
}

[ $# -eq 0 ] && set -- gpu torch
status=0  # nonzero when a section's test failed (so run_all_on_device.sh's steps say so)
for s in "$@"; do
  echo "=== $s ($(left) s left)"
  case $s in
    gpu | torch | compile | trialshare) "section_$s" ;;
    compile[0-9]*) section_compile_multi "${s#compile}" ;;
    bench*) section_bench "${s#bench}" ;;
    decode*) section_decode "${s#decode}" ;;
    *) echo "unknown section $s"; false ;;
  esac || status=1
done
exit $status
