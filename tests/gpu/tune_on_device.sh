#!/bin/bash
# End-to-end ccltune on a GPU machine (issue 3's figures): `ccltune tune` with the NCCL
# backend and its private Redis, a hanging choice and a killed rank through the real
# Redis abort path, and nccl-tests side by side in the same run. Writes $OUT/tune.md.
#
# On the GPU machine, from the repository root (a bundle instead of build/: device_env.sh):
#   make build        (or: cmake --build build --target ccltune ccltune_inproc_tuner)
#   nccl-tests built outside the repository, binaries in $NCCL_TESTS_BIN (optional)
#   bash tests/gpu/tune_on_device.sh [section...]
# Sections: sweep4 graph4 sweep2 faults nccltests (default: all; nccltests = nccltests4 +
# nccltests2); accuracy2 accuracy4 (near 1 MiB, below); on an 8-GPU machine also sweep8
# graph8 nccltests8; search2 search4 search8 searchepilogue2 searchepilogue4 (exhaustive and
# adaptive search side by side, below); nodes2 nodes4 (two emulated nodes, issue 33);
# netsettings2 netsettings4 (NCCL's network settings on two emulated nodes, below).
# NVLink multicast stays off.
set -uo pipefail
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
report=$OUT/tune.md
base_bin=${CCLTUNE_BASE_BIN:-$(gpu_file ccltune-base)}
sections=${*:-sweep4 graph4 sweep2 faults nccltests}
log() { echo "$*" | tee -a "$report"; }
: >"$report"
log "# ccltune tune on $(hostname), $(date -u +%FT%TZ)"
nvidia-smi -L | sed 's/^/    /' | tee -a "$report"
nvidia-smi topo -m >"$OUT/topo.txt" 2>&1

tune() {  # tune <name> <gpus csv> <args...>: timed `ccltune tune`, JSON kept
  local name=$1 gpus=$2 n rc t0 t1
  shift 2
  n=$(echo "$gpus" | tr ',' '\n' | wc -l)
  t0=$(date +%s.%N)
  CUDA_VISIBLE_DEVICES=$gpus timeout -k 5 "${TUNE_TIMEOUT:-280}" "${CCLTUNE:-ccltune}" tune --backend nccl --ranks "$n" \
    --json "$OUT/$name.json" "$@" >"$OUT/$name.txt" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  log "- $name: exit $rc, wall $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s: ccltune tune --ranks $n $*"
}

# One nccl-tests run on GPUs 0..n-1, bf16, 5 warm-up iterations, time = max over threads:
# nt <n> <op> <output stem> <args...> writes $OUT/<stem>.txt.
nt() {
  local g=$1 op=$2 stem=$3
  shift 3
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((g - 1))) timeout 120 "$NCCL_TESTS_BIN/${op}_perf" \
    -t "$g" -g 1 -d bfloat16 -w 5 -a 3 "$@" >"$OUT/$stem.txt" 2>&1
}

# nccl-tests on <n> GPUs: eager NT_REPEAT times (compare_with_nccl_tests.py takes the
# median per size: nccl-tests' eager loop pays host launch gaps, and those vary between
# runs by several percent near 1 MiB), graph once. (nccl-tests' -I 1, an event recorded
# between iterations, is no neutral timer: on the 2-GPU kind it added ~3 us to every op,
# 64 MiB included.)
nccl_tests() {  # nccl_tests <n>
  local g=$1 op i
  if [ ! -x "$NCCL_TESTS_BIN/all_reduce_perf" ]; then
    log "- nccl-tests: not run (no \$NCCL_TESTS_BIN/all_reduce_perf)"
    return
  fi
  for op in all_reduce all_gather reduce_scatter; do
    for i in $(seq 1 "${NT_REPEAT:-3}"); do
      nt "$g" "$op" "nt_${op}_${g}.$i" -b 1K -e 256M -f 2 -n 20
    done
    nt "$g" "$op" "ntg_${op}_${g}" -b 1K -e 64M -f 4 -n 20 -G 20
  done
}

# Where ccltune and nccl-tests part near 1 MiB (issue 3): per op, nccl-tests three times
# with 20 iterations and three times with 200 (a loop long enough that its fixed start and
# sync cost no longer counts), once as a CUDA graph, and three times over P2P/IPC;
# ccltune's `nccl` choice twice as tuned (gated rounds of 20), once with rounds of 200
# (gated chunks), once as a graph, and once from one buffer set that stays in L2, as
# nccl-tests measures (CCLTUNE_BUFFER_ROTATION=0).
# accuracy_table.py tabulates it.
accuracy() {  # accuracy <n>
  local g=$1 devs op n i f
  devs=$(seq -s, 0 $((g - 1)))
  local near=(-b 512K -e 4M -f 2)
  for op in all_gather all_reduce reduce_scatter; do
    for n in 20 200; do
      for i in 1 2 3; do
        nt "$g" "$op" "acc_${op}_${g}.n$n.$i" "${near[@]}" -n "$n" -J "$OUT/acc_${op}_${g}.n$n.$i.json"
      done
    done
    nt "$g" "$op" "acc_${op}_${g}.graph" "${near[@]}" -n 20 -G 20 -J "$OUT/acc_${op}_${g}.graph.json"
    # nccl-tests' threads share one process, so NCCL connects them "P2P/direct pointer"; one
    # process per GPU (ccltune, torchrun jobs) gets P2P/IPC. This setting gives nccl-tests
    # the latter; NCCL_DEBUG shows the transport.
    for i in 1 2 3; do
      NCCL_P2P_DIRECT_DISABLE=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P \
        nt "$g" "$op" "acc_${op}_${g}.ipc.$i" "${near[@]}" -n 20 -J "$OUT/acc_${op}_${g}.ipc.$i.json"
    done
  done
  # shellcheck disable=SC2054  # the commas are part of --op's value
  local acc=(--op allGather,allReduce,reduceScatter --dtypes bf16 --sizes 512KiB:4MiB:2 --choices nccl)
  for i in 1 2; do
    tune "acc${g}.$i" "$devs" "${acc[@]}"
  done
  # 200 iterations per round: more than one gate holds, so timed as gated chunks.
  tune "acc${g}.long" "$devs" "${acc[@]}" --iters 200
  tune "acc${g}.graph" "$devs" "${acc[@]}" --cuda-graph
  CCLTUNE_BUFFER_ROTATION=0 tune "acc${g}.one" "$devs" "${acc[@]}"
  # Which P2P transport each side's NCCL connected with (the NCCL_DEBUG lines).
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P nt "$g" all_gather "acc_transport_${g}" \
    -b 1M -e 1M -n 5
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P tune "acc${g}.transport" "$devs" --op allGather \
    --dtypes bf16 --sizes 1MiB --choices nccl
  for f in acc_transport_${g}.txt acc_all_gather_${g}.ipc.1.txt acc${g}.transport.txt; do
    log "- $f: $(grep -o 'via P2P/[A-Za-z/]*' "$OUT/$f" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  done
  python3 tests/gpu/accuracy_table.py "$OUT" "$g" >>"$report" 2>&1
}

# Emulated nodes (issue 33): the GPUs split into 2 nodes (their own NCCL_HOSTID each, so
# NCCL joins them with NET/Socket over loopback); the 3-op sweep, exhaustive then adaptive;
# what NCCL formed (from its own log), the per-size table, the hierarchical all-reduce's own
# time per size next to NCCL's default and the winner (nodes_table.py, from the JSON; `hier`
# runs where every node has 2+ ranks: nodes4), and the time of both searches.
# NODES_SIZES narrows the sweep (default 1KiB:256MiB:2); NODES_ARGS adds tune flags (e.g.
# "--warmup 3 --rounds 3 --iters 10", to fit 256 MiB over sockets into one device call).
nodes() {  # nodes <n>
  local g=$1 devs m sweep
  sweep=(--op allReduce,allGather,reduceScatter --dtypes bf16 --sizes "${NODES_SIZES:-1KiB:256MiB:2}"
    --emulate-nodes 2 ${NODES_ARGS:-})
  devs=$(seq -s, 0 $((g - 1)))
  for m in exhaustive adaptive; do
    tune "nodes${g}-$m" "$devs" "${sweep[@]}" --search "$m" --no-publish -v
  done
  grep -h "^# nodes\|NCCL formed\|^# search\|tuning " "$OUT/nodes${g}-exhaustive.txt" \
    "$OUT/nodes${g}-adaptive.txt" >>"$report"
  grep -E "^# (allReduce|allGather|reduceScatter) |^ +[0-9]+ +[0-9]+ +bf16 " \
    "$OUT/nodes${g}-exhaustive.txt" >>"$report"
  grep -h "hier\|span\|nccl-net" "$OUT/nodes${g}-exhaustive.txt" | sort | uniq -c | head >>"$report"
  python3 tests/gpu/nodes_table.py "$OUT/nodes${g}-exhaustive.json" \
    "$OUT/nodes${g}-adaptive.json" >>"$report" 2>&1
  python3 tests/bench/search_compare.py --exhaustive "$OUT/nodes${g}-exhaustive.json" \
    --adaptive "$OUT/nodes${g}-adaptive.json" >>"$report" 2>&1
}

# NCCL's network settings (issue 33) on 2 emulated nodes: NCCL's default against each catalog
# `nccl-net:` setting, each measured by rank processes of its own started with its environment
# (NCCL reads them once per process); the 3-op sweep, exhaustive. NETSET_SIZES narrows it
# (default 1KiB:256MiB:4); TUNE_TIMEOUT bounds the run (default here 560 s).
netsettings() {  # netsettings <n>
  local g=$1 devs
  devs=$(seq -s, 0 $((g - 1)))
  local net="nccl,nccl-net:socketThreads=2,socksPerThread=2,nccl-net:socketThreads=4,socksPerThread=4"
  net+=",nccl-net:socketThreads=8,socksPerThread=2"
  net+=",nccl-net:socketThreads=4,socksPerThread=4,buffSize=16MiB,nccl-net:ibQps=4"
  TUNE_TIMEOUT=${TUNE_TIMEOUT:-560} tune "net${g}" "$devs" --op allReduce,allGather,reduceScatter \
    --dtypes bf16 --sizes "${NETSET_SIZES:-1KiB:256MiB:4}" --emulate-nodes 2 --search exhaustive \
    --no-publish -v --choices "$net"
  grep -h "^# nodes\|own rank processes\|tuning " "$OUT/net${g}.txt" >>"$report"
  python3 tests/gpu/net_settings_table.py "$OUT/net${g}.json" >>"$report" 2>&1
}

# Exhaustive and adaptive search on the 3-op sweep, back to back, twice, alternating
# (issue 25); then a CUDA-graph pair (short screening rounds recapture the graph). With
# $CCLTUNE_BASE_BIN (an earlier build's ccltune; default: ccltune-base beside the built
# files), one exhaustive run of it as well.
search() {  # search <n>
  local g=$1 devs run m sweep=(--op "allReduce,allGather,reduceScatter" --dtypes bf16 --sizes 1KiB:256MiB:2)
  devs=$(seq -s, 0 $((g - 1)))
  for run in exhaustive-1 adaptive-1 adaptive-2 exhaustive-2; do
    tune "search${g}-$run" "$devs" "${sweep[@]}" --search "${run%-*}" --no-publish -v
  done
  for m in exhaustive adaptive; do
    tune "search${g}-graph-$m" "$devs" --op allReduce --dtypes bf16 --sizes 1KiB:256MiB:4 \
      --cuda-graph --search "$m" --no-publish
  done
  if [ -x "$base_bin" ]; then
    CCLTUNE=$base_bin tune "search${g}-base-exhaustive" "$devs" "${sweep[@]}" \
      --search exhaustive --no-publish
  fi
  python3 tests/bench/search_compare.py --exhaustive "$OUT"/search"$g"-exhaustive-{1,2}.json \
    --adaptive "$OUT"/search"$g"-adaptive-{1,2}.json >>"$report" 2>&1
  python3 tests/bench/search_compare.py --exhaustive "$OUT/search$g-graph-exhaustive.json" \
    --adaptive "$OUT/search$g-graph-adaptive.json" >>"$report" 2>&1
  [ -f "$OUT/search$g-base-exhaustive.json" ] &&
    python3 tests/bench/search_compare.py --exhaustive "$OUT/search$g-base-exhaustive.json" \
      "$OUT/search$g-exhaustive-1.json" --adaptive "$OUT/search$g-adaptive-1.json" >>"$report" 2>&1
}

# The same pair on the epilogue campaign (all-reduce + residual add + RMSNorm, 12 shapes,
# every unfused choice + the separate kernel and the fused kernels), as CUDA graphs.
search_epilogue() {  # search_epilogue <n>
  local g=$1 devs m
  devs=$(seq -s, 0 $((g - 1)))
  for m in exhaustive adaptive; do
    tune "search${g}-epilogue-$m" "$devs" --plan tests/gpu/plans/epilogue-decode.yaml \
      --cuda-graph --search "$m" --no-publish -v
  done
  python3 tests/bench/search_compare.py --exhaustive "$OUT/search$g-epilogue-exhaustive.json" \
    --adaptive "$OUT/search$g-epilogue-adaptive.json" >>"$report" 2>&1
  if [ -x "$base_bin" ]; then
    CCLTUNE=$base_bin tune "search${g}-epilogue-base-exhaustive" "$devs" \
      --plan tests/gpu/plans/epilogue-decode.yaml --cuda-graph --search exhaustive --no-publish
    python3 tests/bench/search_compare.py \
      --exhaustive "$OUT/search$g-epilogue-base-exhaustive.json" \
      "$OUT/search$g-epilogue-exhaustive.json" \
      --adaptive "$OUT/search$g-epilogue-adaptive.json" >>"$report" 2>&1
  fi
}

for s in $sections; do
  case $s in
    accuracy2) accuracy 2 ;;
    accuracy4) accuracy 4 ;;
    sweep4) tune sweep4 0,1,2,3 --op allReduce,allGather,reduceScatter --dtypes bf16 \
              --sizes 1KiB:256MiB:2 ;;
    graph4) tune graph4 0,1,2,3 --op allReduce --dtypes bf16 --sizes 1KiB:64MiB:4 --cuda-graph
            tune eager4 0,1,2,3 --op allReduce --dtypes bf16 --sizes 1KiB:64MiB:4 ;;
    sweep2) tune sweep2 0,1 --op allReduce,allGather,reduceScatter --dtypes bf16 \
              --sizes 1KiB:256MiB:2 ;;
    sweep8) tune sweep8 0,1,2,3,4,5,6,7 --op allReduce,allGather,reduceScatter --dtypes bf16 \
              --sizes 1KiB:256MiB:2 ;;
    graph8) tune graph8 0,1,2,3,4,5,6,7 --op allReduce --dtypes bf16 --sizes 1KiB:64MiB:4 --cuda-graph
            tune eager8 0,1,2,3,4,5,6,7 --op allReduce --dtypes bf16 --sizes 1KiB:64MiB:4 ;;
    search2) search 2 ;;
    searchepilogue2) search_epilogue 2 ;;
    searchepilogue4) search_epilogue 4 ;;
    search4) search 4 ;;
    nodes4) nodes 4 ;;
    nodes2) nodes 2 ;;
    netsettings4) netsettings 4 ;;
    netsettings2) netsettings 2 ;;
    search8) search 8 ;;
    nccltests8) nccl_tests 8 ;;
    nccltests4) nccl_tests 4 ;;
    nccltests2) nccl_tests 2 ;;
    faults)
      CCLTUNE_ENABLE_TEST_CHOICES=1 tune hang4 0,1,2,3 --op allReduce --dtypes bf16 \
        --sizes 1MiB,16MiB --choices nccl,test-hang,nccl:algo=ring,proto=simple --choice-timeout 5
      # A rank killed mid-benchmark: every other rank must end within choiceTimeout + 5 s.
      CUDA_VISIBLE_DEVICES=0,1,2,3 ccltune tune --backend nccl --ranks 4 --op allReduce \
        --dtypes bf16 --sizes 1KiB:256MiB:2 --choice-timeout 5 --no-publish \
        >"$OUT/kill4.txt" 2>&1 &
      tune_pid=$!
      sleep 12
      victim=$(pgrep -f -- "worker --rank 2 " | head -1)
      kill -9 "$victim"
      t0=$(date +%s.%N)
      wait $tune_pid
      rc=$?
      t1=$(date +%s.%N)
      log "- kill4: rank 2 (pid $victim) killed; tune exit $rc after $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s; survivors: $(pgrep -fc -- 'ccltune worker') still running"
      grep -m3 "error" "$OUT/kill4.txt" | sed 's/^/    /' | tee -a "$report" ;;
    nccltests)
      nccl_tests 4
      nccl_tests 2 ;;
  esac
done
python3 tests/gpu/compare_with_nccl_tests.py "$OUT" >>"$report" 2>&1
cat "$report"
