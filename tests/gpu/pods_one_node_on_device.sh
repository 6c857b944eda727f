#!/bin/bash
# Two pods on one node (issue 33): two groups of 2 ranks, each group in its own UTS namespace
# with its own host name (`unshare --uts` + `hostname`, as two pods have their pod names),
# on one machine. What joins the groups, read from NCCL's own log:
#   positive  both pods carry CCLTUNE_NODE_NAME=node-1 (the downward API's spec.nodeName):
#             ccltune's communicators get NCCL_HOSTID=node-1, NCCL forms 1 node, P2P between
#             the pods (not NET)
#   negative  no CCLTUNE_NODE_NAME: NCCL hashes each pod's host name, forms 2 nodes, NET
#             between them (what a pod gets without ccltune's node name)
# Sections (default: all):
#   worker      `ccltune worker` ranks (what pods run), every GPU visible to both pods
#   worker-own  the same, each pod seeing only its 2 GPUs (CUDA_VISIBLE_DEVICES, as a device
#               plugin gives a pod)
#   preload     an unmodified torch.distributed program (nodes_torch_program.py, 1 MiB) with
#               libccltune-nccl preloaded (it sets NCCL_HOSTID from CCLTUNE_NODE_NAME)
# Exit 1 when a positive case shows NET (or did not run); exit 2 when `unshare --uts` is not
# permitted (pods cannot be emulated here).
#
# On the GPU machine, as root, from the repository root (a bundle instead of build/:
# device_env.sh):
#   make build        (or: cmake --build build --target ccltune ccltune_inproc_tuner \
#                      ccltune_nccl_shim)
#   bash tests/gpu/pods_one_node_on_device.sh
# Output: $OUT/pods-one-node.md and $OUT/pods-one-node/ (every rank's log, NCCL's logs of the
# torch ranks, the workers' summary JSON).
set -uo pipefail
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
export PYTHONUNBUFFERED=1
D=$OUT/pods-one-node
mkdir -p "$D"
report=$OUT/pods-one-node.md
log() { echo "$*" | tee -a "$report"; }
: >"$report"
log "# Two pods on one node, $(hostname), $(date -u +%FT%TZ)"
if ! unshare --uts true 2>/dev/null; then
  log "unshare --uts is not permitted here (needs root): pods cannot be emulated"
  exit 2
fi
unset NCCL_HOSTID CCLTUNE_NODE_NAME
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$D/redis.log" 2>&1 &
redis_pid=$!
trap 'kill $redis_pid 2>/dev/null' EXIT
plan=$D/plan.yaml
cat >"$plan" <<'EOF'
collectives:
- op: allReduce
  dtypes: [bf16]
  sizes: [1MiB]
  choices: [nccl]
benchmark: {warmupIters: 2, iters: 5, rounds: 2, rendezvousTimeoutSeconds: 60}
EOF
nccl_dir=$(python3 -c 'import os, nvidia.nccl as m; print(os.path.join(list(m.__path__)[0], "lib"))')
SHIM=$(gpu_file libccltune-nccl.so)
rc=0

# pod <hostname> <CUDA_VISIBLE_DEVICES> <first rank> <first GPU> <command template...>: the
# command once per rank of the pod (2), inside one new UTS namespace named <hostname>; @R@
# and @L@ become the rank and the GPU index. Logs to $D/$LOGTAG.<hostname>.rank<r>.log.
# Waits for every rank; the worst exit code.
pod() {
  local name=$1 visible=$2 first=$3 local0=$4
  shift 4
  CUDA_VISIBLE_DEVICES=$visible unshare --uts bash -c '
    hostname "$1"; first=$2; local0=$3; shift 3
    pids=()
    for i in 0 1; do
      r=$((first + i)); l=$((local0 + i))
      cmd=(); for a in "$@"; do a=${a//@R@/$r}; cmd+=("${a//@L@/$l}"); done
      "${cmd[@]}" >"'"$D"'/${LOGTAG}.$(hostname).rank$r.log" 2>&1 &
      pids+=($!)
    done
    worst=0; for p in "${pids[@]}"; do wait "$p" || worst=$?; done; exit $worst
  ' pod "$name" "$first" "$local0" "$@"
}

# two_pods <case> <own|all> <command template...>: pods A (ranks 0-1) and B (ranks 2-3).
two_pods() {
  local case=$1 vis=$2 a_vis=0,1,2,3 b_vis=0,1,2,3 b_local=2
  shift 2
  [ "$vis" = own ] && { b_vis=2,3; a_vis=0,1; b_local=0; }
  pod "pod-a-$case" "$a_vis" 0 0 "$@" &
  local pa=$!
  pod "pod-b-$case" "$b_vis" 2 "$b_local" "$@"
  local rb=$?
  wait "$pa"
  local ra=$?
  echo $((ra > rb ? ra : rb))
}

# verdict <case> <nNodes> <transports between the pods>: the line, and rc=1 when a positive
# case has NET between the pods or did not form one node.
verdict() {
  local case=$1 nodes=$2 between=$3
  if [ "$case" = positive ] && { [ "$nodes" != 1 ] || [[ $between == *NET* ]] || [ "$between" = "?" ]; }; then
    log "  FAILED: pods sharing CCLTUNE_NODE_NAME must form 1 node joined by P2P, got nNodes $nodes via $between"
    rc=1
  fi
}

# The case's node variable, for the pods a caller starts in a subshell.
node_env() { [ "$1" = positive ] && export CCLTUNE_NODE_NAME=node-1; true; }

section_worker_run() {  # section_worker_run <own|all>
  local vis=$1 case code job
  for case in positive negative; do
    job=pods-$case-$vis
    code=$(node_env "$case"
      export LOGTAG=worker-$vis
      two_pods "$case" "$vis" ccltune worker --rank @R@ --local-rank @L@ --world-size 4 \
        --job-id "$job" --backend nccl --redis "redis://127.0.0.1:$redis_port" \
        --plan "$plan" --no-publish --report "$D/$job.json")
    # The summary's ncclTopology is NCCL's own log, read by every rank (nccl_init_log.h).
    python3 - "$D/$job.json" "$case" "$vis" "$code" "$D/$job.verdict" <<'PY' | tee -a "$report"
import json, sys
path, case, vis, code, verdict = sys.argv[1:]
try:
    s = json.load(open(path))
except (OSError, ValueError) as e:
    s = {"problem": str(e)}
t = s.get("ncclTopology", {})
print("- worker %s (%s GPUs visible to each pod): exit %s; nodeOfRank %s; NCCL nNodes %s; "
      "intra-node %s; inter-node %s%s" % (case, vis, code, s.get("nodeOfRank"), t.get("nNodes"),
      t.get("intraNode"), t.get("interNode"),
      "; no summary: " + s["problem"] if "problem" in s else ""))
nodes = t.get("nNodes", [])
between = t.get("intraNode", []) if nodes == [1] else t.get("interNode", [])
with open(verdict, "w") as f:
    f.write("%s %s\n" % (",".join(map(str, nodes)) or "?", ",".join(between) or "?"))
PY
    # shellcheck disable=SC2046
    verdict "$case" $(cat "$D/$job.verdict")
  done
}

section_worker() { section_worker_run all; }
section_worker-own() { section_worker_run own; }

section_preload() {
  local case code nodes between
  for case in positive negative; do
    rm -f "$D"/torch-"$case".nccl.*.log
    code=$(node_env "$case"
      MASTER_PORT=$(free_port)
      export LOGTAG=torch LD_PRELOAD=$SHIM MASTER_ADDR=127.0.0.1 MASTER_PORT WORLD_SIZE=4 \
        NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET NCCL_DEBUG_FILE="$D/torch-$case.nccl.%p.log" \
        LD_LIBRARY_PATH="$nccl_dir${CCLTUNE_GPU_LIBS:+:$CCLTUNE_GPU_LIBS}"
      two_pods "$case" all env RANK=@R@ LOCAL_RANK=@L@ timeout -k 5 200 \
        python3 tests/gpu/nodes_torch_program.py "$D/torch-$case" 1048576)
    nodes=$(grep -ho 'nNodes [0-9]*' "$D"/torch-"$case".nccl.*.log 2>/dev/null |
      awk '{print $2}' | sort -u | paste -sd,)
    # NCCL's "Channel 00/0 : 1[1] -> 2[2] [send] via NET/Socket/0": ranks 0-1 are pod A,
    # 2-3 pod B; the transports of the links between them.
    between=$(grep -hoE ': [0-9]+\[[0-9]+\] -> [0-9]+\[[0-9]+\].* via [A-Za-z0-9/]+' \
      "$D"/torch-"$case".nccl.*.log 2>/dev/null |
      awk '{split($2,a,"["); split($4,b,"["); if (int(a[1]/2) != int(b[1]/2)) print $NF}' |
      cut -d/ -f1,2 | sort -u | paste -sd,)
    log "- torch + libccltune-nccl $case: exit $code; NCCL nNodes ${nodes:-?}; between the pods via ${between:-?}"
    grep -h "NCCL_HOSTID set by\|nNodes" "$D"/torch-"$case".nccl.*.log 2>/dev/null |
      sed 's/^[^ ]* //' | sort | uniq -c | head -4 | sed 's/^/    /' | tee -a "$report"
    grep -h "ccltune-nccl: before" "$D"/torch.pod-a-"$case".rank0.log 2>/dev/null | head -1 |
      sed 's/^/    /' | tee -a "$report"
    verdict "$case" "${nodes:-?}" "${between:-?}"
  done
}

for s in ${*:-worker worker-own preload}; do
  log "## $s"
  "section_$s"
done
exit $rc
