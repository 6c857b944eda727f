#!/usr/bin/env bash
# stage-build.sh BUILD_DIR DESTDIR [CUDA_LIB_DIR...]
# Puts a built tree's files where the image keeps them: `cmake --install` into DESTDIR with
# prefix /usr/local (bin/ccltune, bin/ccltune-controller, lib/*.so including libccltune and
# the tuner plugins, include/ccltune.h, lib/ccltune/python), and a copy of each CUDA library (libcudart, libnccl) the installed
# files link, found in CUDA_LIB_DIRs, into /usr/local/cuda/lib64. The Containerfile's build
# stages and `make image` (build-image.sh) both call it, so both images hold the same files.
set -euo pipefail

build=$1
dest=$2
shift 2
prefix=/usr/local

# Stripped: a RelWithDebInfo tree's debug info would triple the binaries' size.
DESTDIR="$dest" cmake --install "$build" --prefix "$prefix" --strip >/dev/null

# The CUDA runtime and NCCL are not Debian packages: copy the exact files the binaries need.
mapfile -t needed < <(find "$dest$prefix/bin" "$dest$prefix/lib" -type f -exec readelf -d {} + \
  2>/dev/null | sed -n 's/.*Shared library: \[\(libcudart[^]]*\|libnccl[^]]*\)\].*/\1/p' |
  sort -u)
for lib in "${needed[@]}"; do
  found=""
  for dir in "$@"; do
    if [[ -e "$dir/$lib" ]]; then found="$dir/$lib"; break; fi
  done
  if [[ -z "$found" ]]; then
    echo "stage-build.sh: $lib is linked but not found in: ${*:-no CUDA library directory given}" >&2
    exit 1
  fi
  mkdir -p "$dest$prefix/cuda/lib64"
  cp -L "$found" "$dest$prefix/cuda/lib64/$lib"
done

echo "staged into $dest:"
(cd "$dest" && find . -type f | sort | sed 's|^\.|  |')
