# Sourced by the device scripts (run_on_device.sh, tune_on_device.sh,
# own_kernels_on_device.sh): repository root, the carried bundle's environment, NVLink
# multicast off (the machines are shared), the in-process tuner, the private Redis cache
# and $OUT.
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
[ -f .gpu/env.sh ] || { echo "no .gpu/env.sh: bundle first (see the script's header)"; exit 2; }
# shellcheck disable=SC1091
source .gpu/env.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export CCLTUNE_INPROC_TUNER="$PWD/.gpu/bin/libccltune-inproc-tuner.so"
export CCLTUNE_CACHE_DIR=${CCLTUNE_CACHE_DIR:-/tmp/ccltune-cache}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
