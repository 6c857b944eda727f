#!/bin/bash
# Several device scripts in one run: runs each "script:section..." step inside a shared time
# budget and, after every step, packs everything written so far into $OUT/all.tgz (a remote
# run may bring back only a few files, and a step cut short by the budget must not lose the
# earlier ones).
#
# On the GPU machine, from the repository root (a bundle instead of build/: device_env.sh):
#   make build        (or the targets each step's script names)
#   bash tests/gpu/run_all_on_device.sh own_kernels_on_device.sh:correct8,bench8 \
#       tune_on_device.sh:sweep8,nccltests8 run_on_device.sh
#
# A step without sections runs the script's defaults. CCLTUNE_GPU_BUDGET_S (default 570)
# bounds the whole call; each step gets what is left (steps of one script append to one
# SCRIPT.stdout, so a script may run as several steps). Results: $OUT/all.tgz, and
# $OUT/steps.md (one line per step: exit code, seconds).
set -uo pipefail
# shellcheck source=tests/gpu/device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
final=$OUT
work=$(mktemp -d)
budget=${CCLTUNE_GPU_BUDGET_S:-570}
t0=$(date +%s)
steps=$final/steps.md
: >"$steps"
for step in "$@"; do
  script=${step%%:*}
  sections=""
  [ "$script" != "$step" ] && sections=${step#*:}
  left=$((budget - ($(date +%s) - t0)))
  if [ "$left" -le 20 ]; then
    echo "- $step: not run (budget spent)" >>"$steps"
    continue
  fi
  s=$(date +%s)
  # shellcheck disable=SC2086
  OUT=$work CCLTUNE_GPU_BUDGET_S=$((left - 10)) timeout -k 5 "$left" \
    bash "tests/gpu/$script" ${sections//,/ } >>"$work/${script%.sh}.stdout" 2>&1
  rc=$?
  echo "- $step: exit $rc, $(($(date +%s) - s)) s" >>"$steps"
  cp "$steps" "$work/steps.md"
  # Saved tensors (*.pt) are the steps' own inputs to their checks, and too big to come back.
  tar czf "$final/all.tgz.tmp" --exclude='*.pt' -C "$work" . && mv "$final/all.tgz.tmp" "$final/all.tgz"
done
cat "$steps"
