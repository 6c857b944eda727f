#!/usr/bin/env bash
# build-image.sh --build BUILD_DIR --out OUT_DIR [--repository REPO] [--cache DIR]
# `make image`: the Containerfile's image without Docker, from a tree that is already built.
#   1. stage-build.sh installs the tree's binaries (and the CUDA libraries they link);
#      a tree built with CUDA gives the `cuda` variant (tag VERSION-cuda), one without `host`.
#   2. mmdebstrap makes a Debian 12 root filesystem of runtime-packages.txt (cached per day
#      and package list under --cache: it is the one step that needs the Debian mirror, the
#      one this machine's apt uses: apt_mirror.sh, CCLTUNE_DEBIAN_MIRROR to override).
#   3. finish-rootfs.sh runs inside it (chroot), as the Containerfile's RUN does.
#   4. umoci packs it as one layer with the config of the Containerfile's stage
#      (image_config.py); the result is OUT_DIR/ccltune-TAG.oci.tar, an OCI archive named
#      REPO:TAG (`podman load -i`, or `skopeo copy oci-archive:FILE docker://...` to push).
# Needs root (mmdebstrap's root mode, chroot, file ownership), mmdebstrap, umoci, cmake.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=manifests/image/apt_mirror.sh
source "$here/apt_mirror.sh"
build="" out="" repo=ghcr.io/ccltune/ccltune cache=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --repository) repo=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    *) echo "build-image.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
die() { echo "build-image.sh: $*" >&2; exit 1; }
[[ -n $build && -n $out ]] || die "usage: --build BUILD_DIR --out OUT_DIR [--repository REPO] [--cache DIR]"
[[ $(id -u) -eq 0 ]] || die "needs root (mmdebstrap root mode, chroot, image file ownership)"
for tool in mmdebstrap umoci cmake readelf python3; do
  command -v "$tool" >/dev/null || die "$tool is missing (make image installs IMAGE_PACKAGES)"
done
build=$(cd "$build" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
cache=${cache:-$out/cache}
mirror=$(debian_mirror main) || die "no Debian mirror (above)"
security=$(debian_mirror security) || die "no Debian security mirror (above)"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[[ -n $version ]] || die "$build/CMakeCache.txt names no project version: is it a build tree?"

work=$out/work
rm -rf "$work"
mkdir -p "$work" "$cache"

# 1. The build tree's files.
bash "$here/stage-build.sh" "$build" "$work/staging" /usr/local/cuda/lib64 \
  /usr/lib/x86_64-linux-gnu >"$work/stage.log"
if [[ -d $work/staging/usr/local/cuda ]]; then variant=cuda tag=$version-cuda; else variant=host tag=$version; fi
echo "build-image.sh: $variant variant from $build ($(grep -c '^  ' "$work/stage.log") files)"

# 2. The Debian base, bounded: a mirror that does not answer fails here, not in an hour.
packages=$(sed 's/#.*//' "$here/runtime-packages.txt" | xargs | tr ' ' ',')
key=$(printf '%s\n%s\n%s\n%s\n' "$packages" "$mirror" "$security" "$(date -u +%F)" |
  sha256sum | cut -c1-16)
base=$cache/debian-bookworm-$key.tar
if [[ ! -f $base ]]; then
  echo "build-image.sh: mmdebstrap bookworm ($packages) from $mirror and $security"
  start=$SECONDS
  timeout 900 mmdebstrap --quiet --format=tar --variant=essential \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --include="$packages" \
    --aptopt='Acquire::Retries "3"' --aptopt='Acquire::http::Timeout "30"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    bookworm "$base.tmp" \
    "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
    "deb $security bookworm-security main" >"$work/mmdebstrap.log" 2>&1 ||
    { tail -20 "$work/mmdebstrap.log" >&2; rm -f "$base.tmp"; die "mmdebstrap failed (log: $work/mmdebstrap.log)"; }
  mv "$base.tmp" "$base"
  echo "build-image.sh: Debian base in $((SECONDS - start)) s"
fi

# 3. Base + build files, finished inside (device nodes are the runtime's business).
rootfs=$work/rootfs
mkdir -p "$rootfs"
tar -xpf "$base" -C "$rootfs" --numeric-owner --exclude='./dev/*'
cp -a "$work/staging/." "$rootfs/"
cp "$here/finish-rootfs.sh" "$rootfs/tmp/"
chroot "$rootfs" bash /tmp/finish-rootfs.sh
rm "$rootfs/tmp/finish-rootfs.sh"

# 4. The OCI image: one layer, the Containerfile's config.
ref=$repo:$tag
layout=$work/oci
umoci init --layout "$layout"
umoci new --image "$layout:$ref"
umoci insert --image "$layout:$ref" "$rootfs" /
# The NCCL the image carries, for its io.ccltune.image.nccl label: what the libnccl.so.2 that
# stage-build.sh copied says of itself (ncclGetVersion needs no GPU).
nccl=none
if [[ $variant == cuda ]]; then
  nccl=$(python3 -c 'import ctypes, sys
v = ctypes.c_int()
ctypes.CDLL(sys.argv[1]).ncclGetVersion(ctypes.byref(v))
print("%d.%d.%d" % (v.value // 10000, v.value // 100 % 100, v.value % 100))' \
    "$(ls "$work"/staging/usr/local/cuda/lib64/libnccl.so.2)") || die "cannot read the staged NCCL's version"
fi
mapfile -t config < <(python3 "$here/image_config.py" "$here/Containerfile" "$variant" \
  VERSION="$version" REVISION="$(git -C "$here" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" \
  CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" NCCL_VERSION="$nccl")
umoci config --image "$layout:$ref" --os=linux --architecture=amd64 "${config[@]}"
umoci gc --layout "$layout"
archive=$out/ccltune-$tag.oci.tar
tar -C "$layout" -cf "$archive.tmp" .
mv "$archive.tmp" "$archive"

compressed=$(find "$layout/blobs" -type f -printf '%s\n' | awk '{s += $1} END {printf "%.1f", s / 1048576}')
unpacked=$(du -sm "$rootfs" | cut -f1)
echo "image $ref ($variant): $archive"
echo "  size: ${compressed} MiB compressed (what a registry stores and a node pulls), ${unpacked} MiB unpacked"
if [[ $variant == cuda ]]; then
  echo "  CUDA libraries inside: $(cd "$rootfs/usr/local/cuda/lib64" && ls | xargs); NCCL $nccl"
fi
