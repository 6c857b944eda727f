#!/usr/bin/env bash
# check_license.sh SOURCE_DIR
# The project's license is the Apache License 2.0: LICENSE holds its full text, and every
# place that declares a license says Apache-2.0 (SPDX) — the root CMakeLists.txt, the Helm
# chart's Artifact Hub annotation, the image's OCI label, the README — so a packager, Artifact
# Hub or an image scanner never reads "no license" or another one.
set -euo pipefail

cd "$1"
fail() { echo "FAILED: $*"; exit 1; }

[[ -f LICENSE ]] || fail "no LICENSE file at the repository root"
for line in "Apache License" "Version 2.0, January 2004" "http://www.apache.org/licenses/" \
    "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" \
    "END OF TERMS AND CONDITIONS" "APPENDIX: How to apply the Apache License to your work."; do
  grep -qF "$line" LICENSE || fail "LICENSE is not the Apache License 2.0 text (no '$line')"
done
# Debian ships the same text: when present, LICENSE must be it, not an abridged copy.
debian=/usr/share/common-licenses/Apache-2.0
if [[ -f $debian ]]; then
  cmp -s LICENSE "$debian" || fail "LICENSE differs from $debian"
fi

grep -qx "# SPDX-License-Identifier: Apache-2.0 (LICENSE)" CMakeLists.txt ||
  fail "CMakeLists.txt lacks '# SPDX-License-Identifier: Apache-2.0 (LICENSE)'"
grep -qx "  artifacthub.io/license: Apache-2.0" charts/ccltune/Chart.yaml ||
  fail "charts/ccltune/Chart.yaml lacks annotations: artifacthub.io/license: Apache-2.0"
grep -qx 'LABEL org.opencontainers.image.licenses="Apache-2.0"' manifests/image/Containerfile ||
  fail "manifests/image/Containerfile lacks LABEL org.opencontainers.image.licenses=\"Apache-2.0\""
grep -q '^Apache License 2.0 (SPDX: `Apache-2.0`)' README.md || fail "README.md names no license"
echo "PASSED: Apache-2.0 in LICENSE, CMakeLists.txt, Chart.yaml, Containerfile and README.md"
