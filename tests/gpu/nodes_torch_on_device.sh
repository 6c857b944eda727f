#!/bin/bash
# Delivery across nodes (issue 33) on 4 GPUs as 2 emulated nodes x 2 (ranks 0-1 node0, 2-3
# node1; NCCL joins the halves with NET/Socket over this machine's loopback).
#   bash tests/gpu/nodes_torch_on_device.sh [tune] [torch]        (default: both)
#   tune   `ccltune tune --emulate-nodes 2` over allReduce, allGather, reduceScatter, bf16,
#          NODES_SIZES (default 1KiB:64MiB:4), with PyTorch's own NCCL (so the fingerprint's
#          NCCL version is the one the program loads); winners exported to winners.json
#   torch  nodes_torch_check.py: an unmodified torch.distributed program (4 processes as
#          torchrun starts them, each told its node only by NCCL_HOSTID or CCLTUNE_NODE_NAME)
#          plain, with libccltune-nccl preloaded, with only the tuner plugin, and with both:
#          per op and size the time and its ratio to plain, results checked against the
#          exact result and plain's within bf16 tolerance, NCCL's nNodes and transport
#          between the nodes from its own log; exit 1 on a wrong result
# NODES_GPUS (default 4) and NODES_NODES (default 2) change the split; NODES_MODES the modes.
#
# On the GPU machine, from the repository root (a bundle instead of build/: device_env.sh):
#   make build        (or: cmake --build build --target ccltune ccltune_inproc_tuner \
#                      ccltune_nccl_shim ccltune_nccl_tuner)
#   bash tests/gpu/nodes_torch_on_device.sh
# Output: $OUT/nodes-torch/ (tune log and JSON, winners.json, every rank's log and NCCL log)
# and $OUT/nodes-torch.md (the summary and the table).
set -uo pipefail
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
export PYTHONUNBUFFERED=1
D=$OUT/nodes-torch
mkdir -p "$D"
report=$OUT/nodes-torch.md
gpus=${NODES_GPUS:-4}
nodes=${NODES_NODES:-2}
sizes=${NODES_SIZES:-1KiB:64MiB:4}
export CUDA_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((gpus - 1)))
SHIM=$(gpu_file libccltune-nccl.so)
PLUGIN=$(gpu_file libnccl-tuner-ccltune.so)
nccl_dir=$(python3 -c 'import os, nvidia.nccl as m; print(os.path.join(list(m.__path__)[0], "lib"))')
log() { echo "$*" | tee -a "$report"; }

section_tune() {
  local cache=/tmp/ccltune-nodes-torch-cache t0 rc
  rm -rf "$cache"
  t0=$(date +%s)
  LD_LIBRARY_PATH="$nccl_dir:$LD_LIBRARY_PATH" timeout -k 5 500 ccltune tune --backend nccl \
    --ranks "$gpus" --emulate-nodes "$nodes" --op allReduce,allGather,reduceScatter \
    --dtypes bf16 --sizes "$sizes" --cache-dir "$cache" --json "$D/tune.json" -v \
    >"$D/tune.log" 2>&1
  rc=$?
  log "- tune: exit $rc, $(($(date +%s) - t0)) s: ccltune tune --ranks $gpus --emulate-nodes $nodes --sizes $sizes"
  grep -h "^# nodes\|NCCL formed\|^# search\|tuning " "$D/tune.log" | sed 's/^/    /' | tee -a "$report"
  grep -E "^# (allReduce|allGather|reduceScatter) |^ +[0-9]+ +[0-9]+ +bf16 " "$D/tune.log" |
    sed 's/^/    /' | tee -a "$report"
  ccltune export --format json --cache-dir "$cache" -o "$D/winners.json"
  log "- winners: exit $?, $(grep -o '"winner"' "$D/winners.json" | wc -l) records in winners.json"
}

section_torch() {
  [ -s "$D/winners.json" ] || { log "- torch: no $D/winners.json (run tune first)"; return 1; }
  log "- ccltune check-nccl as a rank of node0 sees it:"
  CCLTUNE_NODE_NAME=node0 CCLTUNE_RESULTS_FILE="$D/winners.json" \
    LD_LIBRARY_PATH="$nccl_dir:$LD_LIBRARY_PATH" ccltune check-nccl "$SHIM" \
    --world "$gpus" --nodes "$nodes" 2>&1 | sed 's/^/    /' | tee -a "$report"
  # The program sees only PyTorch's own NCCL, first, and the bundle's libraries (if any).
  LD_LIBRARY_PATH="$nccl_dir${CCLTUNE_GPU_LIBS:+:$CCLTUNE_GPU_LIBS}" timeout -k 5 1500 \
    python3 tests/gpu/nodes_torch_check.py \
    --out "$D" --sizes "$sizes" --winners "$D/winners.json" --shim "$SHIM" \
    --plugin "$PLUGIN" --gpus "$gpus" --nodes "$nodes" \
    --modes "${NODES_MODES:-plain,preload,plugin,both}" 2>&1 | tee -a "$report"
  return "${PIPESTATUS[0]}"
}

: >"$report"
log "# Delivery across $nodes emulated nodes x $((gpus / nodes)) GPUs on $(hostname), $(date -u +%FT%TZ)"
nvidia-smi -L | sed 's/^/    /' | tee -a "$report"
rc=0
for s in ${*:-tune torch}; do
  "section_$s" || rc=1
done
exit $rc
