#!/usr/bin/env bash
# finish-rootfs.sh: run as root inside the image's root filesystem once stage-build.sh's files
# are in place (a Containerfile RUN, or chroot from build-image.sh: one script, one result).
# Adds the non-root user, makes the CUDA libraries findable, and fails the build when any
# ccltune binary or library would not load here.
set -euo pipefail

# 65532 is the uid/gid the manifests and the chart run as (runAsUser). Its home is where
# `ccltune tune` keeps its private Redis data (~/.cache/ccltune), so it must be writable.
# The Containerfile's WORKDIR may have made the home already (as root): own it explicitly.
groupadd --gid 65532 ccltune
useradd --uid 65532 --gid 65532 --home-dir /home/ccltune --no-create-home \
  --shell /usr/sbin/nologin -K UID_MAX=65532 ccltune  # above the login range on purpose
install -d -o 65532 -g 65532 -m 0755 /home/ccltune

if [[ -d /usr/local/cuda/lib64 ]]; then
  echo /usr/local/cuda/lib64 >/etc/ld.so.conf.d/000-ccltune-cuda.conf
fi
ldconfig

missing=""
for f in /usr/local/bin/* /usr/local/lib/*.so; do
  [[ -e "$f" ]] || continue
  out=$(ldd "$f" 2>&1) || true
  if grep -q "not found" <<<"$out"; then missing+="$f:"$'\n'"$(grep "not found" <<<"$out")"$'\n'; fi
done
if [[ -n "$missing" ]]; then
  printf 'finish-rootfs.sh: shared libraries missing from the image:\n%s' "$missing" >&2
  exit 1
fi

# Nothing here is needed at run time; apt's lists alone are ~20 MB.
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log
