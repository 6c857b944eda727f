#!/bin/bash
# libccltune-nccl on one GPU (issue 22). Sections (any order; default: check torch faults bench):
#   check   ccltune check-nccl: the real NCCL found, versions, fingerprint, winners
#   torch   torch_programs.py (unmodified PyTorch) without the shim, then preloaded with
#           winners that send calls down the runtime's paths (runtime_winners_file), with no
#           winners, and with CCLTUNE_NCCL=off: every output bitwise equal to the reference;
#           the served and forwarded counts from CCLTUNE_NCCL_DEBUG=1
#   faults  an unreachable cache, another fingerprint's winners: one line each, bitwise equal
#   bench   nccl_shim_bench gpu: host time per call, NCCL direct vs through the shim
#   train   train_steps_program.py (unmodified DDP and FSDP2 steps) with 2 ranks sharing the
#           GPU as two emulated nodes (--share-gpu: NCCL over sockets, no peer memory),
#           plain, then preloaded with the 2-rank test winners (rs+ag and NCCL on its own
#           communicator are what two nodes of one rank run) and CCLTUNE_CONFIRM_CALLS
#           (TRAIN_CONFIRM, default 4): the in-program trial's verdicts, the served and
#           forwarded counts, the final weights against plain. Correctness and machinery
#           only: no time from it is NVLink's or a real node's
#
# On the GPU machine, from the repository root (a bundle instead of build/: device_env.sh):
#   make build        (or: cmake --build build --target ccltune ccltune_nccl_shim \
#                      nccl_shim_bench runtime_winners_file)
#   bash tests/gpu/nccl_shim_on_device.sh check torch faults bench
set -uo pipefail
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
export PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
SHIM=$(gpu_file libccltune-nccl.so)
WINNERS=/tmp/ccltune-shim-winners.json
"$(gpu_file runtime_winners_file)" 1 "$WINNERS" >/dev/null
# The torch runs see only the bundle's own libraries (none for the build tree): PyTorch keeps
# loading its own NCCL.
torch_env=(env "LD_LIBRARY_PATH=$CCLTUNE_GPU_LIBS")
served_env=(CCLTUNE_RESULTS_FILE="$WINNERS" CCLTUNE_FINGERPRINT=runtime-gpu-test)

section_check() {
  echo "== check-nccl (the ccltune binary's own NCCL, no winners source)"
  ccltune check-nccl "$SHIM"
  echo "== check-nccl with the test winners (pinned fingerprint)"
  env "${served_env[@]}" ccltune check-nccl "$SHIM" --world 1
}

run_programs() {  # run_programs NAME [VAR=VALUE...]: one run of torch_programs.py
  local name=$1; shift
  timeout -k 5 300 "${torch_env[@]}" "$@" python3 tests/gpu/torch_programs.py "$OUT/$name.pt" \
    >"$OUT/torch-$name.log" 2>&1
  echo "$name: exit $?, $(grep -c 'ccltune-nccl:' "$OUT/torch-$name.log") shim lines"
}

section_torch() {
  run_programs ref
  run_programs served LD_PRELOAD="$SHIM" CCLTUNE_NCCL_DEBUG=1 "${served_env[@]}"
  run_programs forwarded LD_PRELOAD="$SHIM" CCLTUNE_NCCL_DEBUG=1
  run_programs off LD_PRELOAD="$SHIM" CCLTUNE_NCCL=off CCLTUNE_NCCL_DEBUG=1
  "${torch_env[@]}" python3 tests/gpu/nccl_shim_compare.py "$OUT/ref.pt" "$OUT/served.pt" \
    "$OUT/forwarded.pt" "$OUT/off.pt"
  echo "== served run: what ran (per-call debug lines)"
  grep -o ' -> [^ (]*\( (.*\)\?$' "$OUT/torch-served.log" | sed 's/ (no context: .*/ (no context)/' |
    sort | uniq -c | sort -rn | head -20
  grep -E 'ccltune-nccl: (comm|CCLTUNE|.*NCCL [0-9])' "$OUT/torch-served.log" | grep -v ' -> ' | head
  echo "== forwarded run (no winners source)"
  grep 'ccltune-nccl:' "$OUT/torch-forwarded.log" | grep -v ' -> ' | head -5
}

section_faults() {
  for fault in "unreachable-cache CCLTUNE_REDIS_URL=redis://127.0.0.1:1" \
               "other-fingerprint CCLTUNE_RESULTS_FILE=$WINNERS"; do
    set -- $fault
    local name=$1; shift
    run_programs "$name" LD_PRELOAD="$SHIM" "$@"
    grep -E '^ccltune(-nccl)?:' "$OUT/torch-$name.log" | head -4
  done
  "${torch_env[@]}" python3 tests/gpu/nccl_shim_compare.py "$OUT/ref.pt" \
    "$OUT/unreachable-cache.pt" "$OUT/other-fingerprint.pt"
}

section_bench() {
  echo "== forwarded (no winners source)"
  LD_PRELOAD="$SHIM" CCLTUNE_LOG=quiet "$(gpu_file nccl_shim_bench)" gpu
  echo "== served by winners (4 KiB: nccl:ctas=4 on 1 rank)"
  env LD_PRELOAD="$SHIM" CCLTUNE_LOG=quiet "${served_env[@]}" "$(gpu_file nccl_shim_bench)" gpu
}

section_train() {
  local winners2=/tmp/ccltune-shim-winners-2.json
  "$(gpu_file runtime_winners_file)" 2 "$winners2" >/dev/null
  local prog=(python3 tests/gpu/train_steps_program.py --gpus 2 --share-gpu --blocks 2
    --tokens 1024 --warmup 2 --rounds 3 --steps 2 --profile-steps 1 --timeout-s 170)
  timeout -k 5 180 "${torch_env[@]}" "${prog[@]}" --json "$OUT/train-plain.json" \
    >"$OUT/train-plain.log" 2>&1
  echo "train plain: exit $?"
  timeout -k 5 180 "${torch_env[@]}" LD_PRELOAD="$SHIM" CCLTUNE_RESULTS_FILE="$winners2" \
    CCLTUNE_FINGERPRINT=runtime-gpu-test CCLTUNE_CONFIRM_CALLS="${TRAIN_CONFIRM:-4}" \
    "${prog[@]}" --json "$OUT/train-shim.json" >"$OUT/train-shim.log" 2>&1
  echo "train preloaded (CCLTUNE_CONFIRM_CALLS=${TRAIN_CONFIRM:-4}): exit $?"
  grep -h "ccltune-nccl\|ccltune: " "$OUT/train-shim.log" | head -40
  "${torch_env[@]}" python3 tests/gpu/train_steps_table.py "$OUT/train-plain.json" \
    "$OUT/train-shim.json"
}

sections=${*:-check torch faults bench}
for s in $sections; do
  echo "##### $s"
  "section_$s"
done
