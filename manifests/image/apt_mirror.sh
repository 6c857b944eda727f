#!/usr/bin/env bash
# apt_mirror.sh [main|security]
# The Debian mirror this machine's apt uses, for the scripts that bootstrap a Debian root
# filesystem (build-image.sh, tests/bench/fresh_machine_quickstart.sh): they take it from here
# rather than naming a host. Sourced, it defines debian_mirror; run, it prints one URI.
#
#   debian_mirror main       the Debian archive's URI (the first source of a Debian suite:
#                            bookworm, bookworm-updates, trixie, stable, ...)
#   debian_mirror security   the security archive's URI (the first source of a *-security suite)
#
# Read as apt reads them: sources.list (one-line format), then sources.list.d/*.list (one-line)
# and *.sources (deb822) in name order; deb entries only, disabled stanzas skipped. The
# folders are apt's own (apt-config Dir::Etc::SourceList, Dir::Etc::SourceParts).
# CCLTUNE_DEBIAN_MIRROR and CCLTUNE_DEBIAN_SECURITY_MIRROR override either one (a URI as apt's
# sources write it, e.g. http://HOST/debian); APT_MIRROR_ROOT reads the configuration under
# another root directory (tests). No such source: a message on stderr, exit status 1.

# debian_mirror KIND: prints the URI (no trailing slash), or says why not and returns 1.
debian_mirror() {
  local kind=${1:-main} override root list parts
  case $kind in
    main) override=${CCLTUNE_DEBIAN_MIRROR:-} ;;
    security) override=${CCLTUNE_DEBIAN_SECURITY_MIRROR:-} ;;
    *) echo "apt_mirror.sh: kind must be main or security, not '$kind'" >&2; return 2 ;;
  esac
  if [ -n "$override" ]; then
    echo "${override%/}"
    return 0
  fi
  root=${APT_MIRROR_ROOT:-/}
  list=$root/etc/apt/sources.list parts=$root/etc/apt/sources.list.d/
  if command -v apt-config >/dev/null; then
    eval "$(apt-config -o Dir="$root" shell list Dir::Etc::SourceList/f parts Dir::Etc::SourceParts/d)"
  fi
  local files=() f
  [ -f "$list" ] && files+=("$list")
  for f in "${parts%/}"/*; do
    case $f in *.list | *.sources) [ -f "$f" ] && files+=("$f") ;; esac
  done
  local uri=""
  [ ${#files[@]} -gt 0 ] && uri=$(awk -v kind="$kind" -f - "${files[@]}" <<'AWK'
# One entry: its type list, first URI, suites; printed and done when it matches `kind`.
function debian_suite(s,   base) {
  base = s
  if (kind == "security") {
    if (sub(/-security$/, "", base) == 0 && sub(/\/updates$/, "", base) == 0) return 0
  } else {
    sub(/-(updates|backports|proposed-updates)$/, "", base)
  }
  return base ~ /^(buster|bullseye|bookworm|trixie|forky|duke|sid|experimental|oldoldstable|oldstable|stable|testing|unstable)$/
}
function consider(types, uris, suites,   t, u, s, nt, nu, ns, i, j) {
  nt = split(types, t, " "); nu = split(uris, u, " "); ns = split(suites, s, " ")
  for (i = 1; i <= nt; i++) {
    if (t[i] != "deb") continue
    for (j = 1; j <= ns; j++) {
      if (nu > 0 && u[1] ~ /^(https?|file):/ && debian_suite(s[j])) {
        sub(/\/+$/, "", u[1]); print u[1]; found = 1; exit
      }
    }
  }
}
function flush() {
  if (enabled && types != "") consider(types, uris, suites)
  types = ""; uris = ""; suites = ""; field = ""; enabled = 1
}
FNR == 1 { flush(); deb822 = FILENAME ~ /\.sources$/ }
/^[ \t]*#/ { next }
deb822 && /^[ \t]*$/ { flush(); next }
deb822 && /^[ \t]/ {  # continuation of the field above
  if (field == "types") types = types " " $0
  else if (field == "uris") uris = uris " " $0
  else if (field == "suites") suites = suites " " $0
  next
}
deb822 {
  name = tolower($0); sub(/:.*/, "", name); value = $0; sub(/^[^:]*:[ \t]*/, "", value)
  field = name
  if (name == "types") types = value
  else if (name == "uris") uris = value
  else if (name == "suites") suites = value
  else if (name == "enabled" && tolower(value) ~ /^(no|false|0)$/) enabled = 0
  next
}
{  # one-line: deb [ options ] uri suite [component...]
  line = $0; sub(/[ \t]#.*/, "", line)
  if (line ~ /^[ \t]*$/) next
  gsub(/\[[^]]*\]/, " ", line)
  n = split(line, w, /[ \t]+/); k = 0
  for (i = 1; i <= n; i++) if (w[i] != "") v[++k] = w[i]
  if (k >= 3) consider(v[1], v[2], v[3])
}
END { if (!found) flush() }
AWK
)
  if [ -z "$uri" ]; then
    local var=CCLTUNE_DEBIAN_MIRROR what="a Debian suite (bookworm, trixie, stable, ...)"
    [ "$kind" = security ] && var=CCLTUNE_DEBIAN_SECURITY_MIRROR what="a Debian *-security suite"
    local read="${files[*]}"
    [ -n "$read" ] || read="none: no $list, no ${parts%/}/*.list or *.sources"
    echo "apt_mirror.sh: apt's sources name no deb entry of $what (files read: $read);" \
      "set $var to the mirror's URI" >&2
    return 1
  fi
  echo "$uri"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  debian_mirror "${1:-main}"
fi
