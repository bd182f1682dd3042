#!/usr/bin/env bash
# Builds Flux's helm-controller and the source-controller it pairs with (the references for
# bench/flux.ts) from the Go module proxy into .cache/bench-bin/, only when missing. Prints, one a
# line: `helm-controller VERSION PATH`, `source-controller VERSION PATH`, `crds DIR DIR`.
#
# helm-controller: the latest v1.6 patch the proxy serves (v1.6.5 and later refused on
# 2026-12-04). source-controller: the version helm-controller's go.mod requires of
# github.com/fluxcd/source-controller/api. Their go.mod files replace their api modules with
# `./api`, a nested module the proxy's zip of the parent does not hold, so `go install mod@ver`
# fails: the module sources are downloaded (`go mod download -json`), copied under
# .cache/bench-flux/src/, the `./api` replaces dropped for the published api modules of the same
# version, and built there. Every other replace (go-digest, kustomize) is kept as Flux has it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
source "$here/../../lib.sh"
HELM_CONTROLLER_VERSION=${HELM_CONTROLLER_VERSION:-v1.6.4}
src="$root/.cache/bench-flux/src"
bin="$root/.cache/bench-bin"
mkdir -p "$src" "$bin"
# No go.mod above .cache: `go mod download mod@ver` runs outside any module.
export GOFLAGS="-buildvcs=false -p=2 -mod=mod"
export CGO_ENABLED=0

# fetch MODULE VERSION: a writable copy of the module's source under $src; prints its path.
fetch() {
  local mod=$1 ver=$2 name dir from
  name=${mod##*/}
  dir="$src/$name-$ver"
  if [ ! -f "$dir/go.mod" ]; then
    from=$(go_module_dir "$mod@$ver" "$src")
    rm -rf "$dir.tmp"
    cp -r "$from" "$dir.tmp"
    chmod -R u+w "$dir.tmp"
    # The nested api module, replaced by ./api (absent from the zip): the published one instead.
    (cd "$dir.tmp" && go mod edit -dropreplace="$mod/api")
    mv "$dir.tmp" "$dir"
  fi
  echo "$dir"
}

# build NAME DIR: the module's main package into $bin/NAME-VERSION.
build() {
  local name=$1 dir=$2 ver=$3 out
  out="$bin/$name-$ver"
  if [ ! -x "$out" ]; then
    (cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$out.tmp" . && mv "$out.tmp" "$out")
  fi
  echo "$out"
}

hc_dir=$(fetch github.com/fluxcd/helm-controller "$HELM_CONTROLLER_VERSION")
SOURCE_CONTROLLER_VERSION=$(cd "$hc_dir" && go mod edit -json | sed -n '/"Path": "github.com\/fluxcd\/source-controller\/api"/{n;s/.*"Version": "\(.*\)".*/\1/p}')
[ -n "$SOURCE_CONTROLLER_VERSION" ] || { echo "flux build: helm-controller $HELM_CONTROLLER_VERSION names no source-controller/api version" >&2; exit 1; }
sc_dir=$(fetch github.com/fluxcd/source-controller "$SOURCE_CONTROLLER_VERSION")
hc=$(build helm-controller "$hc_dir" "$HELM_CONTROLLER_VERSION")
sc=$(build source-controller "$sc_dir" "$SOURCE_CONTROLLER_VERSION")
echo "helm-controller $HELM_CONTROLLER_VERSION $hc"
echo "source-controller $SOURCE_CONTROLLER_VERSION $sc"
echo "crds $hc_dir/config/crd/bases $sc_dir/config/crd/bases"
