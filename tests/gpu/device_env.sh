# Sourced by every device script in tests/gpu/ before it starts a GPU process. Sets:
#   - the working directory: the repository root;
#   - NVLink multicast off in every process (NCCL, PyTorch symmetric memory, NVSHMEM): the
#     rule of the shared GPU machines these tests run on. The rule is theirs, not the
#     product's: ccltune passes NCCL's variables through as the user sets them;
#   - where the built files are: gpu_file NAME prints the path of one (ccltune,
#     libccltune.so.0, nccl_choices_gpu_test, ...); ccltune and the test binaries on PATH;
#     CCLTUNE_GPU_LIBS, the library folder a program started with its own LD_LIBRARY_PATH
#     must keep (empty for the build tree: its binaries find their libraries themselves);
#   - the in-process tuner, the private Redis cache, NCCL_TESTS_BIN and $OUT (default gpu-out/).
#
# The built files come from the build tree by default: on the GPU machine, `make build` (or
# `cmake --build build --target ...` with the targets the script's header names) into
# $CCLTUNE_BUILD_DIR (default build/). Alternatively from a bundle, for a machine that does
# not build: a folder of the same files in bin/, the libraries they need in lib/ and an env.sh
# that puts them on PATH and LD_LIBRARY_PATH, named by CCLTUNE_GPU_BUNDLE (or its older name
# CCLTUNE_SHIM_BUNDLE), or .gpu/ when .gpu/env.sh exists and the build tree does not.
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
CCLTUNE_BUILD_DIR=$(realpath -m "${CCLTUNE_BUILD_DIR:-build}")
CCLTUNE_GPU_BUNDLE=${CCLTUNE_GPU_BUNDLE:-${CCLTUNE_SHIM_BUNDLE:-}}
if [ -z "$CCLTUNE_GPU_BUNDLE" ] && [ ! -f "$CCLTUNE_BUILD_DIR/CMakeCache.txt" ] &&
  [ -f .gpu/env.sh ]; then
  CCLTUNE_GPU_BUNDLE=.gpu
fi
if [ -n "$CCLTUNE_GPU_BUNDLE" ]; then
  CCLTUNE_GPU_BUNDLE=$(realpath -m "$CCLTUNE_GPU_BUNDLE")
  [ -f "$CCLTUNE_GPU_BUNDLE/env.sh" ] || { echo "no $CCLTUNE_GPU_BUNDLE/env.sh"; exit 2; }
  # shellcheck disable=SC1091
  source "$CCLTUNE_GPU_BUNDLE/env.sh"
  gpu_dirs=("$CCLTUNE_GPU_BUNDLE/bin" "$CCLTUNE_GPU_BUNDLE/lib")
  CCLTUNE_GPU_LIBS=$CCLTUNE_GPU_BUNDLE/lib
else
  [ -f "$CCLTUNE_BUILD_DIR/CMakeCache.txt" ] || {
    echo "no build tree in $CCLTUNE_BUILD_DIR: run \`make build\` first (see the script's header)"
    exit 2
  }
  gpu_dirs=("$CCLTUNE_BUILD_DIR/worker" "$CCLTUNE_BUILD_DIR/runtime" "$CCLTUNE_BUILD_DIR/plugin"
    "$CCLTUNE_BUILD_DIR/tests/gpu" "$CCLTUNE_BUILD_DIR/tests/unit/runtime/nccl_shim")
  PATH="$CCLTUNE_BUILD_DIR/worker:$CCLTUNE_BUILD_DIR/tests/gpu:$CCLTUNE_BUILD_DIR/tests/unit/runtime/nccl_shim:$PATH"
  CCLTUNE_GPU_LIBS=
  export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}  # the scripts prepend to it under set -u
fi
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# gpu_file NAME: the path of the built file NAME (the first folder holding it; else where it
# would be, so that a missing file shows up by its path).
gpu_file() {
  local d
  for d in "${gpu_dirs[@]}"; do
    [ -e "$d/$1" ] && { echo "$d/$1"; return; }
  done
  echo "${gpu_dirs[0]}/$1"
}

export PATH CCLTUNE_BUILD_DIR CCLTUNE_GPU_BUNDLE CCLTUNE_GPU_LIBS
# The in-process tuner where there is one (else ccltune looks next to itself and says so).
if [ -e "$(gpu_file libccltune-inproc-tuner.so)" ]; then
  CCLTUNE_INPROC_TUNER=$(gpu_file libccltune-inproc-tuner.so)
  export CCLTUNE_INPROC_TUNER
fi
export CCLTUNE_CACHE_DIR=${CCLTUNE_CACHE_DIR:-/tmp/ccltune-cache}
# nccl-tests (built outside the repository; optional): a bundle's nccl-tests/ by default.
export NCCL_TESTS_BIN=${NCCL_TESTS_BIN:-${CCLTUNE_GPU_BUNDLE:+$CCLTUNE_GPU_BUNDLE/nccl-tests}}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"

# The folder of the NCCL PyTorch loads (its nvidia.nccl wheel; a namespace package, so found by
# __path__): tunes put it first on LD_LIBRARY_PATH so their fingerprint names torch's NCCL.
# Prints nothing where torch has no NCCL wheel.
torch_nccl_dir() {
  python3 -c 'import os, nvidia.nccl as n; print(os.path.join(list(n.__path__)[0], "lib"))' 2>/dev/null
}
