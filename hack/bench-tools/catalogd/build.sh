#!/usr/bin/env bash
# Builds catalogd (the reference for bench/catalog-scale.ts) from the Go module proxy into
# .cache/bench-bin/catalogd-VERSION, only when missing: operator-controller's cmd/catalogd at
# CATALOGD_VERSION (default v1.11.0, the release issue 45 and 47 name), with the build tag its
# Makefile uses (GO_BUILD_TAGS := containers_image_openpgp). Prints `catalogd VERSION PATH` and
# `crd FILE` (its standard ClusterCatalog CRD from the same module).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
source "$here/../../lib.sh"
VERSION=${CATALOGD_VERSION:-v1.11.0}
mod=github.com/operator-framework/operator-controller
bin="$root/.cache/bench-bin"
work="$root/.cache/bench-catalogd"
mkdir -p "$bin" "$work"
export GOFLAGS="-buildvcs=false"
export CGO_ENABLED=0
# No go.mod above .cache: `go mod download mod@ver` runs outside any module.
dir=$(go_module_dir "$mod@$VERSION" "$work")
out="$bin/catalogd-$VERSION"
if [ ! -x "$out" ]; then
  (cd "$dir" && nice -n 19 go build -p 1 -trimpath -tags containers_image_openpgp -ldflags "-s -w" -o "$out.tmp" ./cmd/catalogd && mv "$out.tmp" "$out")
fi
echo "catalogd $VERSION $out"
echo "crd $dir/helm/olmv1/base/catalogd/crd/standard/olm.operatorframework.io_clustercatalogs.yaml"
