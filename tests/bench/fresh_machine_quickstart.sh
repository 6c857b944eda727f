#!/usr/bin/env bash
# The newcomer's first command on a fresh Debian 12 machine, timed (issue 35): a bookworm
# rootfs with only what a new build machine has (g++, cmake, git, python3, make: the env
# notes of this workplace), then, inside it as root, `git clone` of this repository and one
# `make TARGET` (default: run). No ccache (the CMAKE_*_LAUNCHER variables are not passed in);
# /usr/local/cuda is bind-mounted read-only where this machine has it, as on the real ones.
#
#   sudo tests/bench/fresh_machine_quickstart.sh [--target run] [--ref HEAD] [--base base.tar]
#       [--keep] --out DIR        (REF: a ref name, e.g. HEAD or a branch)
#
# Writes DIR/log.txt (every output line prefixed with seconds since the clone started),
# DIR/installed.txt (the packages the target installed: dpkg's list after minus before) and
# DIR/summary.txt (phase times, total, cores, load). --base reuses a rootfs tarball made by an
# earlier run (DIR/base.tar is written when none is given), else the rootfs comes from the
# Debian mirror this machine's apt uses (manifests/image/apt_mirror.sh; CCLTUNE_DEBIAN_MIRROR
# and CCLTUNE_DEBIAN_SECURITY_MIRROR override it). Root only: chroot and mounts.
set -euo pipefail

target=run ref=HEAD base="" out="" keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target=$2; shift 2 ;;
    --ref) ref=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--target run|test] [--ref REF] [--base TAR] [--keep] --out DIR" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || { echo "error: --out DIR is required" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "error: run as root (chroot, mounts)" >&2; exit 2; }
case "$target" in run|test) ;; *) echo "error: --target must be run or test, not '$target'" >&2; exit 2 ;; esac
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse --verify "$ref^{commit}")
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ -z "$base" ]; then
  # shellcheck source=manifests/image/apt_mirror.sh
  source "$repo/manifests/image/apt_mirror.sh"
  mirror=$(debian_mirror main) || exit 2
  security=$(debian_mirror security) || exit 2
  base=$out/base.tar
  mmdebstrap --include=g++,cmake,git,python3,make bookworm "$base" \
    "deb $mirror bookworm main" \
    "deb $mirror bookworm-updates main" \
    "deb $security bookworm-security main"
fi

root=$(mktemp -d /tmp/ccltune-fresh.XXXXXX)
mounts=()
cleanup() {
  # Daemons that package scripts started inside (redis-server): ours to end, by pid.
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill "${p#/proc/}" 2>/dev/null || true
  done
  sleep 1
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
  [ "$keep" -eq 1 ] || rm -rf --one-file-system "$root"
}
trap cleanup EXIT
mnt() {  # mnt SOURCE DEST [mount options...]
  mkdir -p "$2"
  mount "${@:3}" "$1" "$2"
  mounts+=("$2")
}

tar -C "$root" -xf "$base"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mnt proc "$root/proc" -t proc
mnt sysfs "$root/sys" -t sysfs
mnt /dev "$root/dev" --rbind
mount --make-rslave "$root/dev"  # nothing done under it reaches this machine's /dev
# The repository as a git bundle of REF: `git clone` copies it like any clone would.
git -C "$repo" bundle create "$root/root/ccltune.bundle" "$ref" 2>/dev/null
if [ -d /usr/local/cuda ]; then
  mnt /usr/local/cuda "$root/usr/local/cuda" --bind -o ro
fi

chroot "$root" dpkg-query -W -f='${Package}\n' | sort >"$out/before.txt"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
cat >"$root/root/quickstart.sh" <<EOF
set -euo pipefail
cd /root
stamp() { echo "=== \$1 \$(date +%s.%N)"; }
stamp clone
git clone -q ccltune.bundle ccltune
cd ccltune && git checkout -q $commit
stamp make
make $target
stamp done
times  # user and system CPU seconds of this shell, then of everything it ran
EOF
set +e
# env -i: no ccache launcher, no proxy or build variables of this machine leak in.
chroot "$root" env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash /root/quickstart.sh 2>&1 |
  python3 -u -c '
import sys, time
t0 = time.monotonic()
for line in sys.stdin:
    sys.stdout.write("%7.1f %s" % (time.monotonic() - t0, line))
' | tee "$out/log.txt"
rc=${PIPESTATUS[0]}
set -e
chroot "$root" dpkg-query -W -f='${Package}\n' | sort >"$out/after.txt"
comm -13 "$out/before.txt" "$out/after.txt" >"$out/installed.txt"
rm "$out/before.txt" "$out/after.txt"

# Phase times from the log: clone, apt (apt-get's lines), then configure/build/tune.
python3 - "$out/log.txt" "$rc" "$target" "$commit" "$load_before" >"$out/summary.txt" <<'EOF'
import re, sys
log, rc, target, commit, load = sys.argv[1:]
marks, first_cmake, tune = {}, None, None
for line in open(log, errors="replace"):
    t, _, text = line.lstrip().partition(" ")
    m = re.match(r"=== (\w+) ", text)
    if m:
        marks[m.group(1)] = float(t)
    elif first_cmake is None and re.match(r"(cmake |-- )", text):
        first_cmake = float(t)
    elif tune is None and "ccltune tune" in text:
        tune = float(t)
print("target: make %s (commit %s), exit %s" % (target, commit[:12], rc))
print("cores: %s; load average before: %s" % (open("/proc/cpuinfo").read().count("processor\t"), load))
cpu = re.findall(r"(\d+)m([\d.]+)s (\d+)m([\d.]+)s", open(log).read())
if len(cpu) >= 2:  # `times`: the children's line is the second
    um, us, sm, ss = cpu[1]
    print("CPU used by everything in the chroot: user %.0f s, system %.0f s" %
          (int(um) * 60 + float(us), int(sm) * 60 + float(ss)))
if "make" in marks:
    print("git clone: %.1f s" % (marks["make"] - marks["clone"]))
    if first_cmake:
        print("package installs (apt-get update + install): %.1f s" % (first_cmake - marks["make"]))
    if tune and first_cmake:
        print("configure + build: %.1f s" % (tune - first_cmake))
    if "done" in marks:
        if tune:
            print("tuning run: %.1f s" % (marks["done"] - tune))
        print("total, clone to end of make %s: %.1f s" % (target, marks["done"] - marks["clone"]))
EOF
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/summary.txt"
echo "installed $(wc -l <"$out/installed.txt") packages" >>"$out/summary.txt"
cat "$out/summary.txt"
exit "$rc"
