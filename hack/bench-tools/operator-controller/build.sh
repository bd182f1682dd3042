#!/usr/bin/env bash
# Builds operator-controller (OLM v1's other process, run beside catalogd by bench/catalog-scale.ts
# as the `olmv1` side) from the Go module proxy into .cache/bench-bin/, only when missing:
# github.com/operator-framework/operator-controller's cmd/operator-controller at
# OPERATOR_CONTROLLER_VERSION (default v1.11.0, the release of the catalogd the bench runs), with
# the build tag its Makefile uses (GO_BUILD_TAGS := containers_image_openpgp). Prints
# `operator-controller VERSION PATH` and `crd FILE` (its standard ClusterExtension CRD).
#
# One dependency is not on this machine's module proxy: pkg.package-operator.run/boxcutter v0.14.0
# (the proxy refuses the pkg.package-operator.run host). Its source rides here as
# boxcutter-v0.14.0.tar.gz: `git archive` of github.com/package-operator/boxcutter at tag v0.14.0
# (commit a89690bf19079c6fa85d6e71903971c2476c04a1, Apache-2.0, its LICENSE inside), the packages
# operator-controller imports and theirs, without tests, its go.mod less the requirements only its
# build tooling (cmd/build, left out) has: pkg.package-operator.run/cardboard*, sigs.k8s.io/kind,
# al.essio.dev/pkg/shellescape. operator-controller's source is copied and built with a replace
# to it; nothing else of operator-controller changes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
VERSION=${OPERATOR_CONTROLLER_VERSION:-v1.11.0}
BOXCUTTER_SHA256=7b8e5dfef0fca3d8f926ddb937e7065b0bca94ff7fcb846d7bf31ac232049eb5
mod=github.com/operator-framework/operator-controller
bin="$root/.cache/bench-bin"
work="$root/.cache/bench-operator-controller"
mkdir -p "$bin" "$work"
export GOFLAGS="-buildvcs=false -mod=mod"
export CGO_ENABLED=0
# No go.mod above .cache: `go mod download mod@ver` runs outside any module.
from=$(cd "$work" && go mod download -json "$mod@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[ -d "$from" ] || { echo "operator-controller build: go mod download $mod@$VERSION gave no source directory" >&2; exit 1; }
out="$bin/operator-controller-$VERSION"
if [ ! -x "$out" ]; then
  echo "$BOXCUTTER_SHA256  $here/boxcutter-v0.14.0.tar.gz" | sha256sum -c --quiet -
  rm -rf "$work/boxcutter" "$work/src"
  tar -xzf "$here/boxcutter-v0.14.0.tar.gz" -C "$work"
  cp -r "$from" "$work/src"
  chmod -R u+w "$work/src"
  (cd "$work/src" && go mod edit -replace "pkg.package-operator.run/boxcutter=$work/boxcutter" \
    && nice -n 19 go build -p 1 -trimpath -tags containers_image_openpgp -ldflags "-s -w" -o "$out.tmp" ./cmd/operator-controller \
    && mv "$out.tmp" "$out")
fi
echo "operator-controller $VERSION $out"
echo "crd $from/helm/olmv1/base/operator-controller/crd/standard/olm.operatorframework.io_clusterextensions.yaml"
