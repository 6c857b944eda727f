#!/usr/bin/env bash
# injected_pod_test.sh BUILD_DIR SOURCE_DIR WORK IMAGE_REF (from run_image_test.sh, the cuda
# variant's unpacked bundle in WORK/bundle): a pod labelled ccltune.io/inject=preload as a
# cluster would run it (issue 46). The webhook's own patch (`ccltune-controller inject-pod`),
# then the kubelet's part under runc: the injected init container copies the libraries into a
# volume; the pod's container, with that volume read-only and the injected environment, runs
# `ccltune check-nccl` on the injected library. It must find the library, the cache (a real
# redis-server with the manifests' ACL users, read as ccltune-reader) and the winners tuned for
# the pod's fingerprint (pinned by the pod's own CCLTUNE_FINGERPRINT, which the webhook keeps:
# without a GPU none is computed).
set -euo pipefail
build=$1 src=$2 work=$3 ref=$4
inj=$work/inject
state=$work/runc-state
rm -rf "$inj" && mkdir -p "$inj/redis" "$inj/volume"
chown 65532:65532 "$inj/volume"  # the image's user writes it, as an emptyDir allows
fail() { echo "FAILED: $*"; exit 1; }

# The cache, as manifests/redis/deployment.yaml runs it: the jobs' user and ccltune-reader.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export REDIS_PASSWORD=jobs-$RANDOM$RANDOM READER_PASSWORD=reader-$RANDOM$RANDOM
export TELEMETRY_PASSWORD=telemetry-$RANDOM$RANDOM
sh -c "$(python3 "$src/tests/gpu/inject_env.py" redis-command "$inj/redis" "$port")" >"$inj/redis.log" 2>&1 &
redis_pid=$!
containers=()
cleanup() {
  kill "$redis_pid" 2>/dev/null || true
  for c in "${containers[@]}"; do runc --root "$state" delete --force "$c" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
for _ in $(seq 100); do
  redis-cli -p "$port" ping 2>/dev/null | grep -q NOAUTH && break
  sleep 0.05
done

# Winners, published as a tuning job does (the jobs' user). No GPU here, so the pod pins the
# fingerprint they were tuned under (CCLTUNE_FINGERPRINT, as docs/winners.md describes).
timeout 120 "$build/worker/ccltune" tune --ranks 2 --backend host --op allReduce --dtypes fp32 \
  --sizes 4KiB,64KiB --redis "redis://:$REDIS_PASSWORD@127.0.0.1:$port/0" \
  >"$inj/tune.log" 2>&1 || { cat "$inj/tune.log"; fail "publishing winners"; }
fp=$(sed -n 's/^# .*, fingerprint \([0-9a-f]*\), .* published$/\1/p' "$inj/tune.log")
[[ -n $fp ]] || { cat "$inj/tune.log"; fail "the tune printed no fingerprint"; }

cat >"$inj/pod.json" <<POD
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "trainer", "namespace": "team-a", "labels": {"ccltune.io/inject": "preload"}},
 "spec": {"nodeName": "gpu-node-1",
          "containers": [{"name": "main", "image": "team-a/trainer",
                          "env": [{"name": "CCLTUNE_FINGERPRINT", "value": "$fp"}]}]}}
POD
"$build/controller/ccltune-controller" inject-pod --redis-url "redis://127.0.0.1:$port/0" \
  --image "$ref" <"$inj/pod.json" >"$inj/injected.json" || fail "ccltune-controller inject-pod"

# run_container NAME ROLE ARGS...: one of the pod's containers (injected_pod.py ROLE) under runc.
cp "$work/bundle/config.json" "$inj/config.base.json"
run_container() {
  local name=ccltune-image-test-$$-$1 role=$2
  shift 2
  cp "$inj/config.base.json" "$work/bundle/config.json"
  python3 "$src/tests/image/injected_pod.py" "$role" "$work/bundle/config.json" "$inj/injected.json" \
    "$inj/volume" gpu-node-1 "$@"
  containers+=("$name")
  local rc=0
  timeout --kill-after=10 60 runc --root "$state" run --bundle "$work/bundle" "$name" </dev/null || rc=$?
  cp "$inj/config.base.json" "$work/bundle/config.json"
  return $rc
}

echo "--- the injected init container (copies the libraries into the pod's volume)"
run_container init init || fail "the init container"
ls "$inj/volume"
preload=$(python3 -c "import json, sys
env = json.load(open(sys.argv[1]))['spec']['containers'][0]['env']
print(next(e['value'] for e in env if e['name'] == 'LD_PRELOAD'))" "$inj/injected.json")
echo "--- the pod's container: ccltune check-nccl $preload --world 2 (LD_PRELOAD=$preload)"
export INJECT_SECRET_VALUE=$READER_PASSWORD  # the Secret the pod's secretKeyRef names
run_container main main ccltune check-nccl "$preload" --world 2 \
  2>&1 | tee "$inj/check.log" || fail "check-nccl in the injected pod"
grep -q '^winners source: redis' "$inj/check.log" || fail "check-nccl did not read the cache"
grep -q "^fingerprint .*: $fp\$" "$inj/check.log" || fail "not the pod's fingerprint"
grep -Eq '^winners: 2 records for 2 ranks' "$inj/check.log" || fail "the pod's winners were not found"
if grep -q "$READER_PASSWORD\|$REDIS_PASSWORD" "$inj/check.log"; then fail "a password was printed"; fi
echo "PASSED: an injected pod finds its library, the cache as ccltune-reader, and its winners"
