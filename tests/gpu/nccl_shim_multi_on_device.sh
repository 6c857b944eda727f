#!/bin/bash
# libccltune-nccl on N GPUs (issue 26): unmodified nccl-tests and an unmodified PyTorch
# decode step, with and without the library preloaded, on winners tuned in the same call
# with the NCCL those programs load (PyTorch's own; nccl-tests are pointed at it too).
#   bash tests/gpu/nccl_shim_multi_on_device.sh N [tune] [nccltests] [decode] [onepro] [symm]
#       [symmab] [symmrep] [correct] [walls] [train] [trial] [kernels]
# symm (issue 43): torch_symm_bench.py (unmodified dist.all_reduce, and PyTorch's own
# symmetric-memory kernels) plain, then preloaded with the graph and with the eager winners;
# preload_table.py compares them; then (SYMM_REGISTER=1, the default) plain and the graph
# winners again with PyTorch registering its segments with NCCL, so captured calls run on the
# tensors directly (direct slots; SYMM_MODES picks the first runs' modes; SYMM_HOLD=0|1 adds
# that run once more with CCLTUNE_HOLD_IN_PLACE at that value, 0 or 1). correct: runtime_gpu_test on the N GPUs (every winner kind,
# staged ones included, against NCCL; CORRECT_HOLD=0|1: once more with CCLTUNE_HOLD_IN_PLACE so). walls: all_reduce_perf -t N with a results file that
# cannot be opened (missing, a directory, empty) against plain, wall seconds each.
# decode (DECODE_REGISTER=1: with PyTorch's register hook in both runs). train:
# an eager fp32 tune of the three ops (TRAIN_SIZES, default 64KiB:64MiB:4) and of
# reduceScatter with avg (FSDP2's gradients), then
# train_steps_program.py (unmodified DDP and FSDP2 steps) plain and preloaded.
# TRAIN_SHIM_ENV ("VAR=VALUE ...") adds variables to the preloaded run only (e.g.
# CCLTUNE_CONFIRM_CALLS=8: the runtime's in-program trial); TRAIN_CONFIRM=N adds a third run,
# preloaded with CCLTUNE_CONFIRM_CALLS=N, and its table against plain. kernels: our kernels with every
# reduction and the staged choices over NVLink against the reference, then the one-GPU test.
# onepro (issue 34): every rank in one process: all_reduce, all_gather, reduce_scatter,
# broadcast and alltoall _perf in -t N -g 1 and -t 1 -g N modes, eager and -G 20, -c 1,
# plain and preloaded, each run's wall time; nccl_onepro_table.py makes the tables.
# On the GPU machine, from the repository root (a bundle instead of build/: device_env.sh):
#   make build        (or: cmake --build build --target ccltune ccltune_inproc_tuner \
#                      ccltune_runtime ccltune_nccl_shim runtime_bench; correct and trial:
#                      runtime_gpu_test; kernels: nccl_choices_gpu_test peer_kernels_gpu_test
#                      shared_staging_gpu_test)
#   bash tests/gpu/nccl_shim_multi_on_device.sh 4 tune nccltests decode
# nccltests and onepro need nccl-tests binaries in $NCCL_TESTS_BIN, built on that machine
# outside the repository (no build script for them lives here).
# Output: $OUT/shim-multi/*.txt|json and the tables of nccl_shim_table.py on stdout.
set -uo pipefail
n=${1:?number of GPUs}; shift
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
CCLTUNE_LIBRARY=$(gpu_file libccltune.so.0)
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/runtime/python" CCLTUNE_LIBRARY
export CUDA_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1)))
D=$OUT/shim-multi
mkdir -p "$D"
SHIM=$(gpu_file libccltune-nccl.so)
NT=${NCCL_TESTS_BIN:-}
nccl_dir=$(torch_nccl_dir)
with_nccl() { LD_LIBRARY_PATH="$nccl_dir:$LD_LIBRARY_PATH" "$@"; }

# TUNE_MODES (default "graph eager") and TUNE_SIZES (default 1KiB:64MiB:2) narrow the tuning;
# a mode not tuned uses the graph winners.
section_tune() {
  for mode in ${TUNE_MODES:-graph eager}; do
    local flag=""; [ $mode = graph ] && flag=--cuda-graph
    with_nccl timeout -k 5 400 ccltune tune --ranks "$n" --op "${TUNE_OPS:-allReduce,allGather,reduceScatter}" \
      --dtypes bf16 --sizes "${TUNE_SIZES:-1KiB:64MiB:2}" $flag --cache-dir "/tmp/shim-tune-$mode" \
      --json "$D/tune-$mode.json" >"$D/tune-$mode.log" 2>&1
    ccltune export --format json --cache-dir "/tmp/shim-tune-$mode" -o "$D/winners-$mode.json"
    echo "tune $mode: exit $?, $(grep -c '"winner"' "$D/winners-$mode.json") records"
  done
}

# NT_OPS (default all_reduce all_gather reduce_scatter), NT_MODES (eager graph) and NT_LAYOUTS
# (threads: -t N -g 1, the default; gpus: -t 1 -g N) narrow it; NT_HOLD=0|1 adds a preloaded
# run with CCLTUNE_HOLD_IN_PLACE at that value (shimhold0|1) beside the default one.
section_nccltests() {
  [ -x "$NT/all_reduce_perf" ] || { echo "nccltests: no \$NCCL_TESTS_BIN/all_reduce_perf"; return; }
  local variants=(shim); [ -n "${NT_HOLD:-}" ] && variants+=("shimhold$NT_HOLD")
  for op in ${NT_OPS:-all_reduce all_gather reduce_scatter}; do
    [ -x "$NT/${op}_perf" ] || { echo "nccltests: no \$NCCL_TESTS_BIN/${op}_perf: $op skipped"; continue; }
    for mode in ${NT_MODES:-eager graph}; do
      for layout in ${NT_LAYOUTS:-threads}; do
        local g="" tag=${op}_$mode shape=(-g 1 -t "$n")
        [ $mode = graph ] && g="-G 20"
        [ $layout = gpus ] && { shape=(-g "$n" -t 1); tag+=_g; }
        local args=(-b 1K -e 64M -f 2 "${shape[@]}" -d bfloat16 -c 1 -w 5 -n 20 $g)
        with_nccl timeout -k 5 120 "$NT/${op}_perf" "${args[@]}" >"$D/plain_$tag.txt" 2>&1
        for v in "${variants[@]}"; do
          local hold=(); [ "$v" != shim ] && hold=("CCLTUNE_HOLD_IN_PLACE=${v#shimhold}")
          with_nccl env LD_PRELOAD="$SHIM" CCLTUNE_RESULTS_FILE="$D/winners-$mode.json" \
            "${hold[@]}" timeout -k 5 120 "$NT/${op}_perf" "${args[@]}" >"$D/${v}_$tag.txt" 2>&1
        done
      done
    done
  done
  python3 tests/gpu/nccl_shim_table.py "$D" "$n"
  for mode in graph eager; do  # libccltune called directly, timed as tune times a choice
    local g=""; [ $mode = graph ] && g=--graph
    with_nccl timeout -k 5 200 "$(gpu_file runtime_bench)" "$D/winners-$mode.json" $g --gpus "$n" \
      >"$D/runtime-bench-$mode.md" 2>&1 && tail -5 "$D/runtime-bench-$mode.md"
  done
}

section_decode() {
  # DECODE_REGISTER=1: PyTorch registers its segments with NCCL in both runs (direct mode).
  local reg=(env)
  [ "${DECODE_REGISTER:-0}" = 1 ] && reg=(env TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK=1)
  echo "== decode step, plain (its NCCL path is PyTorch's NCCL; its runtime path ccltune.torch)"
  "${reg[@]}" timeout -k 5 300 python3 tests/gpu/tp_decode_bench.py --gpus "$n" \
    --winners "$D/winners-graph.json" 2>&1 | tee "$D/decode-plain.md" | tail -8
  echo "== decode step, libccltune-nccl preloaded (the NCCL path now runs the winners)"
  "${reg[@]}" LD_PRELOAD="$SHIM" CCLTUNE_RESULTS_FILE="$D/winners-graph.json" timeout -k 5 300 \
    python3 tests/gpu/tp_decode_bench.py --gpus "$n" --winners "$D/winners-graph.json" 2>&1 |
    tee "$D/decode-shim.md" | tail -8
}

# Wall seconds of one command, appended as "NAME SECONDS EXIT" to $D/onepro-walls.txt.
timed() {
  local name=$1; shift
  local t0 t1 rc; t0=$(date +%s%N)
  "$@"; rc=$?
  t1=$(date +%s%N)
  echo "$name $(awk "BEGIN { printf \"%.3f\", ($t1 - $t0) / 1e9 }") $rc" >>"$D/onepro-walls.txt"
}

section_onepro() {
  [ -x "$NT/all_reduce_perf" ] || { echo "onepro: no \$NCCL_TESTS_BIN/all_reduce_perf"; return; }
  : >"$D/onepro-walls.txt"
  for op in all_reduce all_gather reduce_scatter broadcast alltoall; do
    [ -x "$NT/${op}_perf" ] || { echo "onepro: no \$NCCL_TESTS_BIN/${op}_perf: $op skipped"; continue; }
    for shape in threads gpus; do
      local layout=(-t "$n" -g 1); [ $shape = gpus ] && layout=(-t 1 -g "$n")
      for mode in eager graph; do
        local g=""; [ $mode = graph ] && g="-G 20"
        local args=(-b 1K -e 16M -f 4 "${layout[@]}" -d bfloat16 -c 1 -w 5 -n 20 $g)
        local tag=${op}_${shape}_$mode winners=$D/winners-$mode.json
        [ -f "$winners" ] || winners=$D/winners-graph.json
        timed "plain_$tag" with_nccl timeout -k 5 60 "$NT/${op}_perf" "${args[@]}" \
          >"$D/onepro_plain_$tag.txt" 2>&1
        timed "shim_$tag" with_nccl env LD_PRELOAD="$SHIM" \
          CCLTUNE_RESULTS_FILE="$winners" \
          timeout -k 5 60 "$NT/${op}_perf" "${args[@]}" >"$D/onepro_shim_$tag.txt" 2>&1
      done
    done
  done
  python3 tests/gpu/nccl_onepro_table.py "$D" "$n"
}

section_symm() {
  local bench=(python3 tests/gpu/torch_symm_bench.py --gpus "$n" --timeout-s 250)
  timeout -k 5 280 "${bench[@]}" --json "$D/symm-plain.json" >"$D/symm-plain.log" 2>&1
  echo "symm plain: exit $?"
  for mode in ${SYMM_MODES:-graph eager}; do
    LD_PRELOAD="$SHIM" CCLTUNE_RESULTS_FILE="$D/winners-$mode.json" \
      timeout -k 5 280 "${bench[@]}" --json "$D/symm-shim-$mode.json" >"$D/symm-shim-$mode.log" 2>&1
    echo "symm preloaded ($mode winners): exit $?; $(grep -h 'destroyed' "$D/symm-shim-$mode.log" | head -1)"
    python3 tests/gpu/preload_table.py "$D/symm-plain.json" "$D/symm-shim-$mode.json" --modes "$mode"
  done
  [ "${SYMM_REGISTER:-1}" = 1 ] || return 0
  # Issue 43: PyTorch registers every segment with NCCL (its allocator hook), so captured
  # calls may run on the program's own tensors directly; plain gets the same hook.
  local reg=(env TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK=1)
  timeout -k 5 280 "${reg[@]}" "${bench[@]}" --json "$D/symm-plain-reg.json" \
    >"$D/symm-plain-reg.log" 2>&1
  echo "symm plain, registered: exit $?"
  "${reg[@]}" CCLTUNE_DIRECT_DEBUG=1 LD_PRELOAD="$SHIM" CCLTUNE_RESULTS_FILE="$D/winners-graph.json" \
    timeout -k 5 280 "${bench[@]}" --json "$D/symm-shim-graph-reg.json" \
    >"$D/symm-shim-graph-reg.log" 2>&1
  echo "symm preloaded, registered (graph winners): exit $?; direct slots ready $(grep -c 'direct slot .*: ready' "$D/symm-shim-graph-reg.log"), staged $(grep -c 'direct slot .*: staged' "$D/symm-shim-graph-reg.log")"
  grep -h 'direct slot .*: staged' "$D/symm-shim-graph-reg.log" | sort | uniq -c | sort -rn | head -5
  python3 tests/gpu/preload_table.py "$D/symm-plain-reg.json" "$D/symm-shim-graph-reg.json" --modes graph
  [ -n "${SYMM_HOLD:-}" ] || return 0
  # The same with CCLTUNE_HOLD_IN_PLACE=$SYMM_HOLD (in-place one-shot holding its results or not).
  local held=$D/symm-shim-graph-reg-hold$SYMM_HOLD
  "${reg[@]}" CCLTUNE_HOLD_IN_PLACE="$SYMM_HOLD" CCLTUNE_DIRECT_DEBUG=1 LD_PRELOAD="$SHIM" \
    CCLTUNE_RESULTS_FILE="$D/winners-graph.json" timeout -k 5 280 "${bench[@]}" \
    --json "$held.json" >"$held.log" 2>&1
  echo "symm preloaded, registered, CCLTUNE_HOLD_IN_PLACE=$SYMM_HOLD (graph winners): exit $?; direct slots ready $(grep -c 'direct slot .*: ready' "$held.log")"
  python3 tests/gpu/preload_table.py "$D/symm-plain-reg.json" "$held.json" --modes graph
}

# symmrep: REP_N (default 3) pairs of runs of dist.all_reduce in REP_MODE (default eager), plain
# then preloaded with that mode's winners, alternated, and preload_table.py's medians over them:
# eager times are host-bound and move between processes, so one pair says little. REP_MIN and
# REP_MAX narrow the sizes (default 1KiB to 64MiB). REP_ENV ("VAR=VALUE ..."): the second run of
# each pair sets those variables instead of preloading (NCCL_MIN_CTAS=32 NCCL_MAX_CTAS=32, say).
# REP_SHIM_ENV ("VAR=VALUE ...") adds variables to the preloaded runs only. REP_THIRD (a winners
# file) adds a third run to every round, preloaded with it, compared with plain on its own (an
# A/B of two sets of winners, interleaved). REP_PIN=0 leaves the ranks unpinned (by default each
# runs on cores local to its GPU).
section_symmrep() {
  local mode=${REP_MODE:-eager} plains="" pres="" thirds=""
  local bench=(python3 tests/gpu/torch_symm_bench.py --gpus "$n" --timeout-s 250 --modes "$mode"
    --min "${REP_MIN:-1KiB}" --max "${REP_MAX:-64MiB}")
  [ "${REP_PIN:-1}" = 0 ] && bench+=(--no-pin)
  local w=$D/winners-$mode.json; [ -f "$w" ] || w=$D/winners-graph.json
  # shellcheck disable=SC2206  # REP_ENV and REP_SHIM_ENV are lists of VAR=VALUE words
  local second=(env LD_PRELOAD="$SHIM" CCLTUNE_RESULTS_FILE="$w" ${REP_SHIM_ENV:-})
  local what="preloaded ($(basename "$w")${REP_SHIM_ENV:+, $REP_SHIM_ENV})"
  [ -n "${REP_ENV:-}" ] && { second=(env $REP_ENV); what="with $REP_ENV"; }
  for i in $(seq 1 "${REP_N:-3}"); do
    timeout -k 5 280 "${bench[@]}" --json "$D/rep-plain-$i.json" >"$D/rep-plain-$i.log" 2>&1
    echo "rep $i plain: exit $?"
    "${second[@]}" timeout -k 5 280 "${bench[@]}" --json "$D/rep-shim-$i.json" \
      >"$D/rep-shim-$i.log" 2>&1
    echo "rep $i $what: exit $?"
    plains+=${plains:+,}$D/rep-plain-$i.json
    pres+=${pres:+,}$D/rep-shim-$i.json
    [ -n "${REP_THIRD:-}" ] || continue
    LD_PRELOAD="$SHIM" CCLTUNE_RESULTS_FILE="$REP_THIRD" timeout -k 5 280 "${bench[@]}" \
      --json "$D/rep-third-$i.json" >"$D/rep-third-$i.log" 2>&1
    echo "rep $i preloaded ($(basename "$REP_THIRD")): exit $?"
    thirds+=${thirds:+,}$D/rep-third-$i.json
  done
  python3 tests/gpu/preload_table.py "$plains" "$pres" --modes "$mode"
  # With CCLTUNE_CONFIRM_CALLS in REP_SHIM_ENV: the first preloaded run's trial verdicts.
  grep -h " a call in this program " "$D/rep-shim-1.log" | head -40
  [ -n "$thirds" ] || return 0
  echo "##### plain against preloaded with $(basename "$REP_THIRD"), the same rounds"
  python3 tests/gpu/preload_table.py "$plains" "$thirds" --modes "$mode"
}

# symmab: an A/B on one tune: dist.all_reduce in AB_MODE (default graph) plain, preloaded with
# that mode's winners, and preloaded with those winners less the choices matching AB_DROP
# (fnmatch) at the sizes AB_BYTES (winners_without.py), so the runtime runs the next measured
# choice there; sizes AB_MIN to AB_MAX (default 128KiB to 4MiB).
section_symmab() {
  local mode=${AB_MODE:-graph}
  local bench=(python3 tests/gpu/torch_symm_bench.py --gpus "$n" --timeout-s 250 --modes "$mode"
    --min "${AB_MIN:-128KiB}" --max "${AB_MAX:-4MiB}")
  python3 tests/gpu/winners_without.py "$D/winners-$mode.json" "$D/winners-$mode-ab.json" \
    --bytes "${AB_BYTES:?sizes in bytes}" --drop "${AB_DROP:?choice name pattern}"
  timeout -k 5 280 "${bench[@]}" --json "$D/ab-plain.json" >"$D/ab-plain.log" 2>&1
  echo "ab plain: exit $?"
  for v in a b; do
    local w=$D/winners-$mode.json; [ $v = b ] && w=$D/winners-$mode-ab.json
    LD_PRELOAD="$SHIM" CCLTUNE_RESULTS_FILE="$w" timeout -k 5 280 "${bench[@]}" \
      --json "$D/ab-$v.json" >"$D/ab-$v.log" 2>&1
    echo "ab $v ($(basename "$w")): exit $?"
    python3 tests/gpu/preload_table.py "$D/ab-plain.json" "$D/ab-$v.json" --modes "$mode"
  done
}

section_correct() {
  timeout -k 5 300 "$(gpu_file runtime_gpu_test)" \
    --gtest_filter='RuntimeGpu.MatchesNcclOnEveryPath:RuntimeGpu.CapturedCallsOnRegisteredBuffers*' \
    >"$D/runtime-gpu-test.txt" 2>&1
  echo "runtime_gpu_test: exit $?; $(grep -c WRONG "$D/runtime-gpu-test.txt") WRONG lines"
  tail -3 "$D/runtime-gpu-test.txt"
  [ -n "${CORRECT_HOLD:-}" ] || return 0
  # Every winner kind again with in-place one-shot holding its results or not.
  CCLTUNE_HOLD_IN_PLACE="$CORRECT_HOLD" timeout -k 5 300 "$(gpu_file runtime_gpu_test)" \
    --gtest_filter='RuntimeGpu.MatchesNcclOnEveryPath' >"$D/runtime-gpu-test-hold.txt" 2>&1
  echo "runtime_gpu_test, CCLTUNE_HOLD_IN_PLACE=$CORRECT_HOLD: exit $?; $(grep -c WRONG "$D/runtime-gpu-test-hold.txt") WRONG lines"
  tail -3 "$D/runtime-gpu-test-hold.txt"
}

# kernels: our kernels over NVLink against the reference, as the worker runs them: every
# reduction (avg too) and dtype at odd sizes, and the staged choices (copies inside the pull
# kernels' launch) on the program's own buffers; then the one-GPU simulated-rank tests.
section_kernels() {
  timeout -k 5 500 "$(gpu_file nccl_choices_gpu_test)" \
    --gtest_filter='NcclChoicesGpu.PeerKernelsEveryRedOpDtypeOddSize:NcclChoicesGpu.Staged*' \
    >"$D/choices-kernels.txt" 2>&1
  echo "nccl_choices_gpu_test kernels: exit $?"
  grep -h "OK \]\|FAILED \]\|SKIPPED \]\|Failure" "$D/choices-kernels.txt" | head -10
  timeout -k 5 120 "$(gpu_file peer_kernels_gpu_test)" --gtest_brief=1 >"$D/peer-kernels.txt" 2>&1
  echo "peer_kernels_gpu_test: exit $?; $(tail -1 "$D/peer-kernels.txt")"
  timeout -k 5 120 "$(gpu_file shared_staging_gpu_test)" --gtest_brief=1 >"$D/shared-staging.txt" 2>&1
  echo "shared_staging_gpu_test: exit $?; $(tail -1 "$D/shared-staging.txt")"
}

# trial: the runtime's in-program trial (CCLTUNE_CONFIRM_CALLS). runtime_gpu_test's trial tests
# on the N GPUs, then symmrep with TRIAL_CALLS (default 8) calls an arm in the preloaded runs
# and the same eager winners without the trial as REP_THIRD, interleaved (run tune first).
section_trial() {
  timeout -k 5 300 "$(gpu_file runtime_gpu_test)" --gtest_filter='RuntimeGpu.*Trial*' \
    >"$D/runtime-trial.txt" 2>&1
  echo "runtime_gpu_test trials: exit $?; $(grep -c WRONG "$D/runtime-trial.txt") WRONG lines"
  grep -h "OK \]\|FAILED \]\|Failure" "$D/runtime-trial.txt" | head -10
  REP_SHIM_ENV="CCLTUNE_CONFIRM_CALLS=${TRIAL_CALLS:-8}" REP_THIRD="$D/winners-eager.json" \
    section_symmrep
}

section_walls() {
  [ -x "$NT/all_reduce_perf" ] || { echo "walls: no \$NCCL_TESTS_BIN/all_reduce_perf"; return; }
  : >"$D/onepro-walls.txt"
  mkdir -p /tmp/walls-dir && : >/tmp/walls-empty.json
  local args=(-b 1K -e 1M -f 4 -g 1 -t "$n" -d bfloat16 -w 5 -n 20)
  timed plain with_nccl timeout -k 5 120 "$NT/all_reduce_perf" "${args[@]}" >"$D/walls-plain.txt" 2>&1
  for f in missing:/nonexistent/w.json directory:/tmp/walls-dir empty:/tmp/walls-empty.json; do
    timed "shim_${f%%:*}" with_nccl env LD_PRELOAD="$SHIM" CCLTUNE_RESULTS_FILE="${f#*:}" \
      timeout -k 5 120 "$NT/all_reduce_perf" "${args[@]}" >"$D/walls-${f%%:*}.txt" 2>&1
  done
  cat "$D/onepro-walls.txt"
  grep -h "ccltune-nccl" "$D"/walls-*.txt | sort | uniq -c | head -8
}

section_train() {
  with_nccl timeout -k 5 400 ccltune tune --ranks "$n" --op allReduce,allGather,reduceScatter \
    --dtypes fp32 --sizes "${TRAIN_SIZES:-64KiB:64MiB:4}" --cache-dir /tmp/shim-tune-train \
    --json "$D/tune-train.json" >"$D/tune-train.log" 2>&1
  echo "tune train: exit $?"
  # FSDP2 reduce-scatters fp32 gradients with ncclAvg: its own records, beside sum's.
  with_nccl timeout -k 5 300 ccltune tune --ranks "$n" --op reduceScatter --redop avg \
    --dtypes fp32 --sizes "${TRAIN_SIZES:-64KiB:64MiB:4}" --cache-dir /tmp/shim-tune-train \
    --json "$D/tune-train-avg.json" >"$D/tune-train-avg.log" 2>&1
  echo "tune train (reduceScatter avg): exit $?"
  ccltune export --format json --cache-dir /tmp/shim-tune-train -o "$D/winners-train.json"
  local prog=(python3 tests/gpu/train_steps_program.py --gpus "$n" --timeout-s 190)
  timeout -k 5 200 "${prog[@]}" --json "$D/train-plain.json" >"$D/train-plain.log" 2>&1
  echo "train plain: exit $?"
  # shellcheck disable=SC2086  # TRAIN_SHIM_ENV is a list of VAR=VALUE words
  env LD_PRELOAD="$SHIM" CCLTUNE_RESULTS_FILE="$D/winners-train.json" ${TRAIN_SHIM_ENV:-} \
    timeout -k 5 200 "${prog[@]}" --json "$D/train-shim.json" >"$D/train-shim.log" 2>&1
  echo "train preloaded${TRAIN_SHIM_ENV:+ ($TRAIN_SHIM_ENV)}: exit $?"
  grep -h "ccltune-nccl\|ccltune: " "$D/train-shim.log" | grep -v "^$" | head -40
  python3 tests/gpu/train_steps_table.py "$D/train-plain.json" "$D/train-shim.json"
  [ "${TRAIN_CONFIRM:-0}" -gt 0 ] || return 0
  env LD_PRELOAD="$SHIM" CCLTUNE_RESULTS_FILE="$D/winners-train.json" \
    CCLTUNE_CONFIRM_CALLS="$TRAIN_CONFIRM" timeout -k 5 200 "${prog[@]}" \
    --json "$D/train-trial.json" >"$D/train-trial.log" 2>&1
  echo "train preloaded (CCLTUNE_CONFIRM_CALLS=$TRAIN_CONFIRM): exit $?"
  grep -h "ccltune: .* a call in this program\|destroyed" "$D/train-trial.log" | head -40
  python3 tests/gpu/train_steps_table.py "$D/train-plain.json" "$D/train-trial.json"
}

for s in ${*:-tune nccltests decode}; do
  echo "##### $s"
  "section_$s"
done
