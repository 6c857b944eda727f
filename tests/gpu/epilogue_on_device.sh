#!/bin/bash
# Issue 16 on a GPU machine: the epilogue kernels' own test, `ccltune tune` over
# all-reduce + residual add + RMSNorm problems (unfused choices then the separate kernel,
# and the fused kernels) eager and as CUDA graphs, PyTorch's unfused path beside it, and
# the tensor-parallel decode step with the fused op. Writes $OUT/epilogue.md.
#
# On the GPU machine, from the repository root (a bundle instead of build/: device_env.sh):
#   make build        (or: cmake --build build --target ccltune ccltune_inproc_tuner \
#                      epilogue_kernels_gpu_test epilogue_kernel_bench ccltune_runtime)
#   bash tests/gpu/epilogue_on_device.sh [section...]
# Sections: kernels (1 GPU: the kernels' test, the separate kernel's time), smoke (every GPU, the worker's paths), tune (every GPU: the
# campaign, eager and graph), check, torch, decode (need the runtime and PyTorch; torch
# and decode 2+ GPUs). Default: all.
set -uo pipefail
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
report=$OUT/epilogue.md
sections=${*:-kernels smoke tune check torch decode}
n=$(nvidia-smi -L | wc -l)
log() { echo "$*" | tee -a "$report"; }
: >"$report"
log "# epilogue fusion on $(hostname), $(date -u +%FT%TZ), $n GPU(s)"
nvidia-smi -L | sed 's/^/    /' | tee -a "$report"

export PYTHONPATH="$PWD/runtime/python${PYTHONPATH:+:$PYTHONPATH}"
CCLTUNE_LIBRARY=$(gpu_file libccltune.so.0)
export CCLTUNE_LIBRARY
cache=/tmp/ccltune-epilogue

# The NCCL PyTorch loads: the runtime finds the winners only when `ccltune tune` measured
# with the NCCL the application runs (the fingerprint names the NCCL version).
tune() {  # tune <name> <args...>: `ccltune tune` on every GPU, JSON and winners kept
  local name=$1 rc nccl_dir
  shift
  nccl_dir=$(torch_nccl_dir)
  rm -rf "$cache-$name"
  LD_LIBRARY_PATH="${nccl_dir:+$nccl_dir:}$LD_LIBRARY_PATH" timeout -k 5 "${TUNE_LIMIT_S:-280}" \
    ccltune tune --backend nccl --ranks "$n" --cache-dir "$cache-$name" \
    --json "$OUT/$name.json" "$@" >"$OUT/$name.txt" 2>&1
  rc=$?
  ccltune export --format json --cache-dir "$cache-$name" -o "$OUT/winners-$name.json" \
    >/dev/null 2>&1
  log "- $name: exit $rc: ccltune tune --ranks $n $* (NCCL from ${nccl_dir:-the system})"
  tail -n 40 "$OUT/$name.txt" >>"$report"
}

for s in $sections; do
  case $s in
    kernels)
      # By its full path: the fail-stop death test re-executes argv[0], which a bare name
      # found on PATH is not (execv: No such file or directory).
      timeout -k 5 240 "$(realpath "$(gpu_file epilogue_kernels_gpu_test)")" >"$OUT/kernels.txt" 2>&1
      log "- kernels: exit $?"
      grep -E "^\[  (PASSED|FAILED|  SKIPPED) " "$OUT/kernels.txt" | tail -n 40 >>"$report"
      timeout -k 5 120 "$(gpu_file epilogue_kernel_bench)" >"$OUT/kernel_bench.txt" 2>&1
      log "- kernel bench: exit $?"
      cat "$OUT/kernel_bench.txt" >>"$report" ;;
    smoke) tune smoke --plan tests/gpu/plans/epilogue-smoke.yaml ;;
    tune)
      if [ "$n" -lt 2 ]; then log "- tune: needs 2 GPUs or more (have $n)"; continue; fi
      tune eager --plan tests/gpu/plans/epilogue-decode.yaml
      tune graph --plan tests/gpu/plans/epilogue-decode.yaml --cuda-graph
      python3 tests/gpu/epilogue_table.py "$OUT" | tee -a "$report" ;;
    torch)
      if [ "$n" -lt 2 ]; then log "- torch: needs 2 GPUs or more (have $n)"; continue; fi
      timeout -k 5 280 python3 tests/gpu/epilogue_bench.py --gpus "$n" \
        --winners "$OUT/winners-graph.json" >"$OUT/torch.txt" 2>&1
      log "- torch: exit $?"
      cat "$OUT/torch.txt" >>"$report" ;;
    decode)
      if [ "$n" -lt 2 ]; then log "- decode: needs 2 GPUs or more (have $n)"; continue; fi
      timeout -k 5 200 python3 tests/gpu/tp_decode_bench.py --gpus "$n" --fused \
        --winners "$OUT/winners-graph.json" >"$OUT/decode.txt" 2>&1
      log "- decode: exit $?"
      cat "$OUT/decode.txt" >>"$report" ;;
    check)  # ccltune.torch's epilogue ops against torch, eager, graph, torch.compile
      timeout -k 5 240 python3 tests/gpu/runtime_torch_check.py --gpus "$n" >"$OUT/check.txt" 2>&1
      log "- check: exit $?"
      grep -v Warning "$OUT/check.txt" | tail -n 15 >>"$report" ;;
    *) log "- $s: unknown section" ;;
  esac
done
