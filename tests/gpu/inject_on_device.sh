#!/bin/bash
# An injected pod's environment on GPUs (issue 46): an unmodified PyTorch program's ranks
# (nodes_torch_program.py, started as torchrun starts them) under exactly the environment the
# webhook gives a pod labelled ccltune.io/inject: preload (rendered by the webhook's own code,
# `ccltune-controller inject-pod`, then resolved as the kubelet would: tests/gpu/inject_env.py),
# against plain NCCL. The cache is a real redis-server with the manifests' ACL users; the
# program reads it as ccltune-reader. Checks: every rank's output bitwise equal to plain NCCL's;
# the preload's destroy lines report calls served by winners.
#
# On the GPU machine, from the repository root:
#   cmake -S . -B build -DCCLTUNE_BUILD_CONTROLLER=ON && cmake --build build --target ccltune \
#     ccltune-controller ccltune_nccl_shim
#   GPUS=2 bash tests/gpu/inject_on_device.sh         # or GPUS=4
set -uo pipefail
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
export PYTHONUNBUFFERED=1
GPUS=${GPUS:-2}
SIZES=${SIZES:-4096 65536 1048576 16777216}
work=$OUT/inject
rm -rf "$work" && mkdir -p "$work/redis"
fail() { echo "FAILED: $*"; exit 1; }

# The cache, as manifests/redis/deployment.yaml runs it (jobs' default user + ccltune-reader).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export REDIS_PASSWORD=jobs-$RANDOM$RANDOM READER_PASSWORD=reader-$RANDOM$RANDOM TELEMETRY_PASSWORD=
sh -c "$(python3 tests/gpu/inject_env.py redis-command "$work/redis" "$port")" >"$work/redis.log" 2>&1 &
redis_pid=$!
trap 'kill $redis_pid 2>/dev/null' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping 2>/dev/null | grep -q NOAUTH && break; sleep 0.1; done

# Winners for this machine and the NCCL torch loads (its nvidia/nccl/lib first), published as
# a tuning job would (the default user).
torch_nccl=$(torch_nccl_dir)
[ -n "$torch_nccl" ] || fail "no NCCL of torch's (nvidia.nccl) found: the program's NCCL must be the tuned one"
sizes_csv=$(echo "$SIZES" | tr ' ' ',')
CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS - 1))) LD_LIBRARY_PATH=${torch_nccl:+$torch_nccl:}$LD_LIBRARY_PATH \
  timeout -k 5 600 ccltune tune --backend nccl --ranks "$GPUS" --op allReduce --dtypes bf16 \
  --sizes "$sizes_csv" --redis "redis://:$REDIS_PASSWORD@127.0.0.1:$port/0" >"$work/tune.txt" 2>&1 ||
  fail "ccltune tune: $(tail -3 "$work/tune.txt")"
grep "^# .*fingerprint" "$work/tune.txt"

# The pod as the webhook patches it, and its first container's environment.
cat >"$work/pod.json" <<'POD'
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "trainer", "labels": {"ccltune.io/inject": "preload"}},
 "spec": {"containers": [{"name": "main", "image": "pytorch", "command": ["python", "train.py"]}]}}
POD
"$(gpu_file ccltune-controller)" inject-pod --redis-url "redis://127.0.0.1:$port/0" --image ccltune:cuda \
  <"$work/pod.json" >"$work/pod-injected.json" || fail "ccltune-controller inject-pod"
shim=$(gpu_file libccltune-nccl.so)
INJECT_SECRET_VALUE=$READER_PASSWORD python3 tests/gpu/inject_env.py render "$work/pod-injected.json" \
  "$(dirname "$shim")" "$work/lib" "$(hostname)" >"$work/env.txt" || fail "inject_env.py render"
echo "== the injected environment (password masked)"
sed 's/^\(CCLTUNE_REDIS_PASSWORD=\).*/\1***/' "$work/env.txt"
mapfile -t injected <"$work/env.txt"

run() {  # run NAME [VAR=VALUE...]: the program's ranks as torchrun starts them
  local name=$1 mport r pids=()
  shift
  mport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  for r in $(seq 0 $((GPUS - 1))); do
    env -u LD_PRELOAD -u NCCL_TUNER_PLUGIN "LD_LIBRARY_PATH=$CCLTUNE_GPU_LIBS" "$@" MASTER_ADDR=127.0.0.1 \
      MASTER_PORT="$mport" RANK=$r WORLD_SIZE="$GPUS" LOCAL_RANK=$r LOCAL_WORLD_SIZE="$GPUS" \
      timeout -k 5 400 python3 tests/gpu/nodes_torch_program.py "$work/$name" $SIZES \
      >"$work/$name.rank$r.log" 2>&1 &
    pids+=($!)
  done
  local rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  echo "$name: exit $rc"
  return $rc
}
run plain || fail "plain run"
run injected CCLTUNE_NCCL_DEBUG=1 "${injected[@]}" || fail "injected run"

echo "== bitwise: every rank's output samples, injected vs plain"
python3 - "$work" "$GPUS" <<'PY' || fail "outputs differ"
import sys, torch
work, n = sys.argv[1], int(sys.argv[2])
bad = 0
for r in range(n):
    a = torch.load("%s/plain.rank%d.pt" % (work, r)); b = torch.load("%s/injected.rank%d.pt" % (work, r))
    for k in a:
        same = torch.equal(a[k].view(torch.uint8) if a[k].is_floating_point() else a[k],
                           b[k].view(torch.uint8) if b[k].is_floating_point() else b[k])
        bad += not same
        print("rank %d %-28s %s" % (r, k, "bitwise equal" if same else "DIFFERS"))
sys.exit(1 if bad else 0)
PY
echo "== the preload's destroy lines (calls served by winners)"
grep -h "calls served by winners" "$work"/injected.rank*.log | sort | uniq -c
served=$(grep -ho "[0-9]* calls served by winners" "$work"/injected.rank*.log | awk '{s+=$1} END {print s+0}')
grep -h "ccltune-nccl:" "$work"/injected.rank0.log | grep -v " -> " | head -5
if [ "$served" -eq 0 ]; then
  echo "== what the cache holds (fingerprints and their inputs)"
  for fp in $(redis-cli -p "$port" --user default --pass "$REDIS_PASSWORD" --no-auth-warning \
    smembers ccltune:v1:fingerprints); do
    echo "$fp: $(redis-cli -p "$port" --user default --pass "$REDIS_PASSWORD" --no-auth-warning get "ccltune:v1:fp:$fp")"
  done
  fail "no call served by winners (fingerprint or cache not reached: see above)"
fi
echo "PASSED: $served calls served by winners over $GPUS ranks, outputs bitwise equal to plain NCCL"
