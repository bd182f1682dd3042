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
# boxcutter-v0.14.0.tar.gz: files of `git archive` of github.com/package-operator/boxcutter at tag
# v0.14.0 (commit a89690bf19079c6fa85d6e71903971c2476c04a1, Apache-2.0, its LICENSE inside),
# repacked: the packages operator-controller imports and theirs (boxcutter.go, machinery,
# managedcache, ownerhandling, probing, validation, util), without tests, its go.mod less six
# requirements only what is left out uses (its build tooling cmd/build and its test environment):
# pkg.package-operator.run/cardboard and three of its modules, sigs.k8s.io/kind,
# al.essio.dev/pkg/shellescape. operator-controller's source is copied and built with a replace to
# it, its go.mod and go.sum otherwise as published (-mod=readonly: nothing resolved anew).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
source "$here/../../lib.sh"
VERSION=${OPERATOR_CONTROLLER_VERSION:-v1.11.0}
BOXCUTTER_SHA256=7b8e5dfef0fca3d8f926ddb937e7065b0bca94ff7fcb846d7bf31ac232049eb5
mod=github.com/operator-framework/operator-controller
bin="$root/.cache/bench-bin"
work="$root/.cache/bench-operator-controller"
mkdir -p "$bin" "$work"
export GOFLAGS="-buildvcs=false -mod=readonly"
export CGO_ENABLED=0
# No go.mod above .cache: `go mod download mod@ver` runs outside any module.
from=$(go_module_dir "$mod@$VERSION" "$work")
grep -q '^[[:space:]]*pkg.package-operator.run/boxcutter v0.14.0$' "$from/go.mod" \
  || { echo "operator-controller build: $mod@$VERSION does not require pkg.package-operator.run/boxcutter v0.14.0, the source carried here" >&2; exit 1; }
# Named by the carried source too: another tarball is another build.
out="$bin/operator-controller-$VERSION-boxcutter-${BOXCUTTER_SHA256:0:12}"
if [ ! -x "$out" ]; then
  echo "$BOXCUTTER_SHA256  $here/boxcutter-v0.14.0.tar.gz" | sha256sum -c --quiet -
  # A copy left read-only by a failed run (the module cache's modes) is made writable to be removed.
  [ ! -d "$work/src" ] || chmod -R u+w "$work/src"
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
