#!/usr/bin/env bash
# run_image_test.sh BUILD_DIR SOURCE_DIR [ARCHIVE]
# The container image, as a cluster node would run it: builds it from BUILD_DIR with
# manifests/image/build-image.sh (or takes ARCHIVE, an OCI archive from `make image`),
# unpacks the archive with umoci and runs it with runc, a real OCI runtime, as the image's
# own user: a 2-rank host-backend tuning job (its table and publish line checked),
# `ccltune-controller --help`, and, in the cuda variant, `ccltune check-plugin`, which
# dlopen()s the NCCL tuner plugin as NCCL does, and `ccltune check-nccl` (libccltune-nccl
# loaded as a program would, finding the image's NCCL). Any broken binary, missing library or
# unwritable home fails it.
# Exit 77 (ctest: skipped) with the reason when this machine cannot build or run images:
# not root, tools missing, Debian mirror unreachable, or runc unable to start any container.
set -euo pipefail

build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
archive=${3:-}
work=$build/tests/image/run
state=$work/runc-state
skip() { echo "SKIPPED: $*"; exit 77; }

[[ $(id -u) -eq 0 ]] || skip "needs root: runc runs rootful containers here, and mmdebstrap's root mode"
missing=""
for tool in runc umoci python3; do command -v "$tool" >/dev/null || missing+=" $tool"; done
[[ -n $archive ]] || command -v mmdebstrap >/dev/null || missing+=" mmdebstrap"
[[ -z $missing ]] || skip "missing tools:$missing (make deps installs them: IMAGE_PACKAGES)"

rm -rf "$work"
mkdir -p "$work" "$state"
containers=()
cleanup() {
  for c in "${containers[@]}"; do runc --root "$state" delete --force "$c" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

if [[ -z $archive ]]; then
  # The mirror build-image.sh takes: the one this machine's apt uses.
  mirror=$(bash "$src/manifests/image/apt_mirror.sh" main 2>"$work/mirror.err") ||
    skip "no Debian mirror: $(tail -1 "$work/mirror.err")"
  timeout 30 python3 -c "import sys, urllib.request
urllib.request.urlopen(sys.argv[1] + '/dists/bookworm/InRelease', timeout=20).read(1)" \
    "$mirror" 2>"$work/mirror.err" || skip "Debian mirror $mirror unreachable: $(tail -1 "$work/mirror.err")"
  timeout 1200 bash "$src/manifests/image/build-image.sh" --build "$build" --out "$work/out" \
    --cache "$build/image/cache" | tee "$work/build.log"
  archive=$(ls "$work"/out/ccltune-*.oci.tar)
fi

# Unpack the archive itself (the deliverable), not the builder's working layout.
mkdir -p "$work/layout"
tar -xf "$archive" -C "$work/layout"
ref=$(python3 -c "import json, sys
print(json.load(open(sys.argv[1]))['manifests'][0]['annotations']['org.opencontainers.image.ref.name'])" \
  "$work/layout/index.json")
umoci unpack --image "$work/layout:$ref" "$work/bundle" >/dev/null
echo "image $ref unpacked; runtime: $(runc --version | head -1)"

# run_in_image NAME SECONDS ARGS...: one container with ARGS as its process, output to stdout.
run_in_image() {
  local name=ccltune-image-test-$$-$1 limit=$2
  shift 2
  python3 - "$work/bundle/config.json" "$@" <<'EOF'
import json, sys
path, args = sys.argv[1], sys.argv[2:]
config = json.load(open(path))
config['process']['args'] = args
config['process']['terminal'] = False
json.dump(config, open(path, 'w'))
EOF
  containers+=("$name")
  timeout --kill-after=10 "$limit" runc --root "$state" run --bundle "$work/bundle" "$name" </dev/null
}

# A container that cannot even run the base image's /bin/true says nothing about the image.
if ! out=$(run_in_image probe 60 /bin/true 2>&1); then
  skip "runc cannot start a container on this machine: $out"
fi

fail() { echo "FAILED: $*"; exit 1; }
user=$(run_in_image user 30 sh -c 'echo "$(id -u):$(id -g) $HOME"; test -w "$HOME"') ||
  fail "the image user has no writable home: $user"
[[ $user == "65532:65532 /home/ccltune" ]] || fail "image user/home is '$user', want 65532:65532 /home/ccltune"
echo "user: $user (writable)"

echo "--- ccltune tune --ranks 2 --backend host --op allReduce --sizes 4KiB,64KiB (inside the image)"
run_in_image tune 300 ccltune tune --ranks 2 --backend host --op allReduce --dtypes fp32 \
  --sizes 4KiB,64KiB 2>&1 | tee "$work/tune.log" || fail "the tuning job failed in the image"
grep -Eq '^ +4096 +1024 +fp32 +sum +[0-9.]+ +[a-z+-]+ +[0-9.]+' "$work/tune.log" || fail "no 4 KiB row"
grep -Eq '^ +65536 +16384 +fp32 +sum +[0-9.]+ +[a-z+-]+ +[0-9.]+' "$work/tune.log" || fail "no 64 KiB row"
grep -q '2 ranks, backend host, .*2 problems, 2 published' "$work/tune.log" || fail "not published"

echo "--- ccltune-controller --help"
run_in_image controller 60 ccltune-controller --help >"$work/controller.log" 2>&1 ||
  { cat "$work/controller.log"; fail "ccltune-controller --help failed in the image"; }
grep -q -- '--worker-image' "$work/controller.log" || fail "controller help lacks --worker-image"
head -3 "$work/controller.log"

variant=$(python3 -c "import json, sys
print(json.load(open(sys.argv[1]))['annotations'].get('io.ccltune.image.variant', ''))" \
  "$work/bundle/config.json")
if [[ $variant == cuda ]]; then
  echo "--- ccltune check-plugin"
  run_in_image plugin 60 ccltune check-plugin 2>&1 | tee "$work/plugin.log" ||
    fail "the NCCL tuner plugin does not load in the image"
  grep -q 'ncclTunerPlugin_v5 "' "$work/plugin.log" || fail "plugin check printed no v5 struct"
  echo "--- ccltune check-nccl (libccltune-nccl finds the image's NCCL)"
  run_in_image shim 60 ccltune check-nccl --world 2 2>&1 | tee "$work/shim.log" ||
    fail "libccltune-nccl does not load or finds no NCCL in the image"
  grep -q '^real NCCL: .*libnccl.*found by' "$work/shim.log" ||
    fail "check-nccl did not report the image's NCCL"
  label=$(python3 -c "import json, sys
print(json.load(open(sys.argv[1]))['annotations'].get('io.ccltune.image.nccl', ''))" "$work/bundle/config.json")
  IFS=. read -r major minor patch <<<"$label"
  grep -q "version code $((major * 10000 + minor * 100 + patch))," "$work/shim.log" ||
    fail "label io.ccltune.image.nccl '$label' is not the NCCL check-nccl found"
  echo "label io.ccltune.image.nccl: $label (the image's NCCL)"
  bash "$src/tests/image/injected_pod_test.sh" "$build" "$src" "$work" "$ref" ||
    fail "an injected pod's check-nccl (above)"
else
  echo "--- $variant variant: no NCCL tuner plugin in this image (it needs CUDA); not loaded"
  [[ $variant == host ]] || fail "image label io.ccltune.image.variant is '$variant'"
fi
echo "PASSED: $ref runs under runc"
# About 1 GB of unpacked copies: kept only when a check failed, to look at.
rm -rf "$work/bundle" "$work/layout" "$work/out/work"
