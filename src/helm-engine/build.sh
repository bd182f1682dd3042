#!/usr/bin/env bash
# Builds Helm's engine (the Go module in go/ beside this script) into the gitignored cache
# (.cache/helm-wasm, or BINNACLE_HELM_WASM_DIR), twice from the same source: natively
# (helm-engine, go/main_native.go: a static child process that engine-process.ts prefers when
# present) and as WebAssembly (helm.wasm, go/main_js.go, run in a worker thread by
# engine-thread.ts). Rebuilt only when its sources change (the stamp); Go's wasm_exec.js must come
# from the same Go that built the module. `bash hack/build-tools.sh helm-wasm` runs this.
#
# usage: src/helm-engine/build.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
src="$here/go"
export CGO_ENABLED=0 GOFLAGS=-mod=mod
command -v go >/dev/null || { echo "helm-engine build: Go is required (https://go.dev/doc/install)" >&2; exit 1; }

wasm_dir=${BINNACLE_HELM_WASM_DIR:-$root/.cache/helm-wasm}
# The stamp's -rN counts changes to the recipe below (bump it with them).
stamp=$(cat "$src/go.mod" "$src/go.sum" "$src/"*.go "$src/versionset/main.go" "$src/overlay/"* | sha256sum | cut -c1-16)-$(go env GOVERSION)-r4
if [ -s "$wasm_dir/helm.wasm" ] && [ -x "$wasm_dir/helm-engine" ] && [ "$(cat "$wasm_dir/stamp" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi

echo "build-tools: building Helm's engine, native and WebAssembly (src/helm-engine)" >&2
mkdir -p "$wasm_dir"
# sprig's RSA key generation goes to the host (go/overlay/sprig_hostkey.go.in):
# the build uses a copy of the pinned sprig module, changed in exactly its four
# rsa.GenerateKey calls, through a `replace` in a generated go.mod (-modfile).
work="$wasm_dir/build"; rm -rf "$work"; mkdir -p "$work"
sprig=$(cd "$src" && go mod download -json github.com/Masterminds/sprig/v3 | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
cp -r "$sprig" "$work/sprig"; chmod -R u+w "$work/sprig"
sed -i 's/rsa\.GenerateKey(/binnacleGenerateRSAKey(/g' "$work/sprig/crypto.go"
calls=$(grep -c 'binnacleGenerateRSAKey(' "$work/sprig/crypto.go" || true)
if [ "$calls" != 4 ]; then echo "build-tools: expected 4 rsa.GenerateKey calls in $sprig/crypto.go, found $calls: update src/helm-engine/go/overlay" >&2; exit 1; fi
cp "$src/overlay/sprig_hostkey.go.in" "$work/sprig/binnacle_hostkey.go"
cp "$src/overlay/sprig_hostkey_native.go.in" "$work/sprig/binnacle_hostkey_native.go"
# Helm (helm.sh/helm/v4) without the client-go scheme (every k8s.io/api group: about half the
# module's code, and all of it registered at start-up): pkg/chart/common's default API version set is written
# out by go/versionset, run natively against the same pinned modules, and
# `lookup` asks for one group version's resources without client-go's discovery package
# (go/overlay/lookup_discovery.go.in).
helm_mod=$(cd "$src" && go mod download -json helm.sh/helm/v4 | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
cp -r "$helm_mod" "$work/helm"; chmod -R u+w "$work/helm"
caps="$work/helm/pkg/chart/common/capabilities.go"
lookup="$work/helm/pkg/engine/lookup_func.go"
# Exactly the scheme's import, the two apiextensions imports and allKnownVersions go.
sed -i -e '/^[[:space:]]*"k8s.io\/client-go\/kubernetes\/scheme"$/d' -e '/^[[:space:]]*apiextensionsv1\(beta1\)\? "k8s.io\/apiextensions-apiserver\/pkg\/apis\/apiextensions\/v1\(beta1\)\?"$/d' -e '/^func allKnownVersions() VersionSet {$/,/^}$/d' "$caps"
sed -i -e '/^[[:space:]]*"k8s.io\/client-go\/discovery"$/d' -e 's/discovery\.NewDiscoveryClientForConfig(/binnacleDiscoveryClient(/' "$lookup"
# Helm 4's internal/version imports client-go's clientset (and with it the scheme) only so that
# k8s.io/client-go is in the build info it reads the default Kubernetes version from; the
# module imports client-go's rest package, which keeps it there.
clientgo="$work/helm/internal/version/clientgo.go"
sed -i '/^[[:space:]]*_ "k8s.io\/client-go\/kubernetes"[[:space:]]*\(\/\/.*\)\?$/d' "$clientgo"
if grep -q 'scheme\.\|apiextensionsv1\|^func allKnownVersions' "$caps" || grep -q 'discovery\.' "$lookup" || [ "$(grep -c 'binnacleDiscoveryClient(' "$lookup")" != 1 ] || grep -q '"k8s.io/client-go/kubernetes' "$clientgo"; then
  echo "build-tools: helm's capabilities.go, lookup_func.go or internal/version/clientgo.go changed shape: update src/helm-engine/go/overlay and src/helm-engine/build.sh" >&2; exit 1
fi
(cd "$src" && CGO_ENABLED=0 go run -trimpath ./versionset) > "$work/helm/pkg/chart/common/binnacle_versionset.go"
cp "$src/overlay/lookup_discovery.go.in" "$work/helm/pkg/engine/binnacle_discovery.go"
cp "$src/go.sum" "$work/go.sum"
{ cat "$src/go.mod"; echo "replace github.com/Masterminds/sprig/v3 => $work/sprig"; echo "replace helm.sh/helm/v4 => $work/helm"; } > "$work/go.mod"
(cd "$src" && GOOS=js GOARCH=wasm go build -trimpath -modfile "$work/go.mod" -ldflags "-s -w" -o "$wasm_dir/helm.wasm.tmp" .)
# Static (CGO_ENABLED=0, set above), for the host's platform: it runs in the image as it is.
# Go 1.26's default collector (greenteagc) can fault (SIGSEGV) instead of dying "out of
# memory" when a mapping fails under helm-engine's RLIMIT_DATA; the previous collector dies as it should.
(cd "$src" && GOEXPERIMENT=nogreenteagc go build -trimpath -modfile "$work/go.mod" -ldflags "-s -w" -o "$wasm_dir/helm-engine.tmp" .)
rm -rf "$work"
mv "$wasm_dir/helm-engine.tmp" "$wasm_dir/helm-engine"
cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" "$wasm_dir/wasm_exec.js"
mv "$wasm_dir/helm.wasm.tmp" "$wasm_dir/helm.wasm"
echo "$stamp" > "$wasm_dir/stamp"
