#!/usr/bin/env bash
# check_image_references.sh SOURCE_DIR
# One image reference, in one place each: the chart's values.yaml (tag = appVersion) and
# manifests/kustomization.yaml (images:). Both tags, the Containerfile's VERSION and the
# chart's appVersion must be the project version (CMakeLists.txt); no example names an
# image; the rendered raw manifests give the controller TAG and its workers TAG-cuda.
set -euo pipefail

cd "$1"
fail() { echo "FAILED: $*"; exit 1; }
version=$(sed -n 's/^project(ccltune VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)
[[ -n $version ]] || fail "no project version in CMakeLists.txt"
repo=ghcr.io/ccltune/ccltune

grep -qx "appVersion: \"$version\"" charts/ccltune/Chart.yaml || fail "Chart.yaml appVersion is not $version"
grep -qx "  repository: $repo" charts/ccltune/values.yaml || fail "values.yaml image.repository is not $repo"
grep -qx '  tag: ""' charts/ccltune/values.yaml || fail "values.yaml image.tag must default to appVersion"
grep -qx "  newTag: $version" manifests/kustomization.yaml || fail "kustomization.yaml newTag is not $version"
grep -qx "ARG VERSION=$version" manifests/image/Containerfile || fail "Containerfile VERSION is not $version"

# Outside the two places, only the kustomize base of the controller names the image.
others=$(grep -rln "$repo" manifests charts --include='*.yaml' --include='*.tpl' |
  grep -vx -e manifests/kustomization.yaml -e charts/ccltune/values.yaml \
    -e manifests/controller/deployment.yaml || true)
[[ -z $others ]] || fail "image named outside values.yaml and kustomization.yaml: $others"
if grep -rn '^ *image:' manifests/examples; then fail "an example names an image"; fi

if ! command -v kubectl >/dev/null; then
  echo "kubectl missing: rendered manifests not checked"
else
  rendered=$(kubectl kustomize manifests)
  grep -q "image: $repo:$version\$" <<<"$rendered" || fail "kustomize output lacks image $repo:$version"
  grep -A1 'name: CCLTUNE_IMAGE' <<<"$rendered" | grep -q "value: $repo:$version\$" ||
    fail "CCLTUNE_IMAGE is not the controller's image"
  grep -q -- '--worker-image=$(CCLTUNE_IMAGE)-cuda' <<<"$rendered" || fail "--worker-image is not TAG-cuda"
fi
echo "PASSED: $repo:$version (controller) and :$version-cuda (workers), named in one place each"
