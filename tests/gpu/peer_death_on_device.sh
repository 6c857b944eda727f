#!/bin/bash
# A peer that dies (issue 36) on N GPUs: peer_death_check.py in every mode (an unmodified
# PyTorch program preloaded with libccltune-nccl, graph and eager; ccltune.torch's ops,
# eager and graph; a block compiled after ccltune.torch.enable()), then the fused kernels'
# fail-stop on one GPU (epilogue_kernels_gpu_test's timeout cases, ranks simulated).
#   bash tests/gpu/peer_death_on_device.sh [N] [MODE...]     (N: every visible GPU)
#
# On the GPU machine, from the repository root (a bundle instead of build/: device_env.sh):
#   make build        (or: cmake --build build --target ccltune ccltune_runtime \
#                      ccltune_nccl_shim epilogue_kernels_gpu_test ccltune_inproc_tuner)
#   bash tests/gpu/peer_death_on_device.sh 4
# Output: $OUT/peer-death.md (the tables), $OUT/peer-death-MODE/peer-death.json and
# $OUT/peer-death-MODE.log (MODE: all, or each one named). All modes take ~1-4 min.
set -uo pipefail
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/runtime/python${PYTHONPATH:+:$PYTHONPATH}"
CCLTUNE_LIBRARY=$(gpu_file libccltune.so.0)
export CCLTUNE_LIBRARY
SHIM=$(gpu_file libccltune-nccl.so)
visible=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
n=${1:-$visible}; shift || true
modes=${*:-all}
rc=0

echo "== fused kernels' fail-stop, one GPU (ranks simulated)"
CUDA_VISIBLE_DEVICES=0 timeout -k 5 120 "$(gpu_file epilogue_kernels_gpu_test)" \
  --gtest_filter='*Timeout*' >"$OUT/peer-death-kernels.log" 2>&1 || rc=1
grep -E '^\[ +(OK|FAILED|SKIPPED) ' "$OUT/peer-death-kernels.log"

for m in $modes; do
  echo "== $n GPUs, mode $m"
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1))) timeout -k 5 560 \
    python3 tests/gpu/peer_death_check.py --gpus "$n" --mode "$m" --shim "$SHIM" \
    --timeout-ms 5000 --out "$OUT/peer-death-$m" >"$OUT/peer-death-$m.log" 2>&1 || rc=1
  sed -n '/^| mode/,$p' "$OUT/peer-death-$m.log" | tee -a "$OUT/peer-death.md"
  grep -E '^[a-z-]+: (PASS|FAIL)' "$OUT/peer-death-$m.log"
done
exit $rc
