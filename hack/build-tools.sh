#!/usr/bin/env bash
# Builds the programs of Binnacle's local control plane from the Go module proxy into the
# gitignored cache (.cache/bin), each only when it is missing. Versions are pinned here and in
# hack/tools/go.mod (+ go.sum).
#
# usage: hack/build-tools.sh [NAME...]   (default: every tool)
# names: kube-apiserver kube-controller-manager kube-scheduler etcd kubectl kwok helm helm-wasm (also builds helm-engine)
#        openshift-api (not built by default: the OpenShift API manifests for `cluster up --openshift`)
#        kubelet kube-proxy containerd cni-plugins pause (not built by default: the real node of
#        `cluster up --real-node`; runc comes from Debian, hack/lib.sh ensure_real_node_packages)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/hack/lib.sh"
bin=${BINNACLE_BIN_DIR:-$root/.cache/bin}
mkdir -p "$bin"

KWOK_VERSION=v0.8.0
HELM_VERSION=v4.3.1
CONTAINERD_VERSION=v2.2.1
CNI_PLUGINS_VERSION=v1.9.1
K8S_VERSION=$(awk '$1=="k8s.io/kubernetes"{print $2; exit}' "$root/hack/tools/go.mod")
k8s_minor=$(echo "$K8S_VERSION" | cut -d. -f2)

export CGO_ENABLED=0 GOFLAGS=-mod=readonly
command -v go >/dev/null || { echo "binnacle: Go 1.26 or newer is needed to build the control-plane tools; install it from https://go.dev/dl" >&2; exit 1; }

tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(kube-apiserver kube-controller-manager kube-scheduler etcd kubectl kwok helm helm-wasm)

k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"

# Kubernetes programs share most packages: build the missing ones in one `go build` so they share work.
k8s_pkgs=()
for t in "${tools[@]}"; do
  [ -x "$bin/$t" ] && continue
  case "$t" in
    kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet|kube-proxy) k8s_pkgs+=("k8s.io/kubernetes/cmd/$t") ;;
  esac
done
if [ ${#k8s_pkgs[@]} -gt 0 ]; then
  echo "build-tools: building ${k8s_pkgs[*]##*/} $K8S_VERSION (a few minutes the first time)" >&2
  (cd "$root/hack/tools" && go build -trimpath -ldflags "$k8s_ldflags" -o "$bin/" "${k8s_pkgs[@]}")
fi

for t in "${tools[@]}"; do
  case "$t" in
    etcd)
      if [ ! -x "$bin/etcd" ]; then
        echo "build-tools: building etcd (the version k8s.io/kubernetes $K8S_VERSION pins)" >&2
        (cd "$root/hack/tools" && go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3)
      fi ;;
    kwok)
      if [ ! -x "$bin/kwok" ]; then
        echo "build-tools: building kwok $KWOK_VERSION" >&2
        GOBIN="$bin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
      fi
      # kwok has no built-in stages: take the "fast" node and pod stages that ship in its module,
      # and ours (hack/kwok); rebuilt when ours change (the stamp).
      stages_stamp=$(cat "$root"/hack/kwok/*.yaml | sha256sum | cut -c1-16)-$KWOK_VERSION
      if [ ! -s "$bin/kwok-stages.yaml" ] || [ "$(cat "$bin/kwok-stages.stamp" 2>/dev/null)" != "$stages_stamp" ]; then
        moddir=$(go_module_dir "sigs.k8s.io/kwok@$KWOK_VERSION")
        stage="$moddir/kustomize/stage"
        tmp="$bin/kwok-stages.yaml.tmp"
        : > "$tmp"
        for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
                 pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
          { echo "---"; cat "$stage/$f"; } >> "$tmp"
        done
        for f in "$root"/hack/kwok/*.yaml; do
          { echo "---"; cat "$f"; } >> "$tmp"
        done
        mv "$tmp" "$bin/kwok-stages.yaml"
        echo "$stages_stamp" > "$bin/kwok-stages.stamp"
      fi ;;
    helm)
      # The witness of Helm's engine (the same module and version, helm.sh/helm/v4): a helm
      # from an older pin (v3 had no helm.version beside it) is replaced, not kept.
      if [ ! -x "$bin/helm" ] || [ "$(cat "$bin/helm.version" 2>/dev/null)" != "$HELM_VERSION" ]; then
        echo "build-tools: building helm $HELM_VERSION" >&2
        rm -f "$bin/helm.version"
        GOBIN="$bin" go install -trimpath -ldflags "-s -w" "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
        echo "$HELM_VERSION" > "$bin/helm.version"
      fi ;;
    helm-wasm)
      # Helm's engine, native (helm-engine) and WebAssembly (helm.wasm), from its component
      # src/helm-engine: its own build script keeps the recipe and the stamp beside the Go code.
      bash "$root/src/helm-engine/build.sh" ;;
    openshift-api)
      # The OpenShift APIs' CRD manifests, copied from the github.com/openshift/api module pinned in
      # hack/openshift-api/go.mod (verified against its go.sum), with its OpenAPI definitions for the
      # APIs OpenShift serves itself (ImageStream, BuildConfig), from which src/cluster/openshift.ts
      # derives their CRDs. Refreshed when the pin changes.
      os_dir=${BINNACLE_OPENSHIFT_API_DIR:-$root/.cache/openshift-api}
      os_version=$(awk '$1=="require" && $2=="github.com/openshift/api"{print $3; exit}' "$root/hack/openshift-api/go.mod")
      if [ "$(cat "$os_dir/version" 2>/dev/null)" != "$os_version" ]; then
        echo "build-tools: copying the OpenShift API manifests from github.com/openshift/api $os_version" >&2
        moddir=$(go_module_dir github.com/openshift/api "$root/hack/openshift-api")
        rm -rf "$os_dir.tmp" && mkdir -p "$os_dir.tmp/crds"
        (cd "$moddir" && cp config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml \
            config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_infrastructures-Default.crd.yaml \
            config/v1/zz_generated.crd-manifests/0000_03_config-operator_01_proxies.crd.yaml \
            route/v1/zz_generated.crd-manifests/routes.crd.yaml \
            security/v1/zz_generated.crd-manifests/0000_03_config-operator_01_securitycontextconstraints.crd.yaml \
            console/v1/zz_generated.crd-manifests/*.crd.yaml "$os_dir.tmp/crds/")
        cp "$moddir/openapi/openapi.json" "$os_dir.tmp/openapi.json"
        chmod -R u+w "$os_dir.tmp"
        echo "$os_version" > "$os_dir.tmp/version"
        rm -rf "$os_dir" && mv "$os_dir.tmp" "$os_dir"
      fi ;;
    containerd)
      # containerd and its runc shim, without cgo: the btrfs, devmapper and zfs snapshotters
      # (which need it) are left out; the real node uses overlayfs.
      if [ ! -x "$bin/containerd" ] || [ ! -x "$bin/containerd-shim-runc-v2" ]; then
        echo "build-tools: building containerd $CONTAINERD_VERSION" >&2
        GOBIN="$bin" go install -trimpath -ldflags "-s -w" -tags no_btrfs,no_devmapper,no_zfs \
          "github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION" \
          "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION"
      fi ;;
    cni-plugins)
      # Only the plugins the real node's network uses, in their own directory (containerd's bin_dirs).
      if [ ! -x "$bin/cni/bridge" ] || [ ! -x "$bin/cni/host-local" ] || [ ! -x "$bin/cni/loopback" ] || [ ! -x "$bin/cni/portmap" ]; then
        echo "build-tools: building the CNI plugins $CNI_PLUGINS_VERSION (bridge, host-local, loopback, portmap)" >&2
        mkdir -p "$bin/cni"
        GOBIN="$bin/cni" go install -trimpath -ldflags "-s -w" \
          "github.com/containernetworking/plugins/plugins/main/bridge@$CNI_PLUGINS_VERSION" \
          "github.com/containernetworking/plugins/plugins/ipam/host-local@$CNI_PLUGINS_VERSION" \
          "github.com/containernetworking/plugins/plugins/main/loopback@$CNI_PLUGINS_VERSION" \
          "github.com/containernetworking/plugins/plugins/meta/portmap@$CNI_PLUGINS_VERSION"
      fi ;;
    pause)
      # The Pod sandbox program (hack/pause): registry.k8s.io/pause cannot be pulled offline.
      if [ ! -x "$bin/pause" ]; then
        echo "build-tools: building the sandbox program (hack/pause)" >&2
        (cd "$root/hack/pause" && go build -trimpath -ldflags "-s -w" -o "$bin/pause" .)
      fi ;;
    kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet|kube-proxy) ;;
    *) echo "build-tools: unknown tool '$t'" >&2; exit 2 ;;
  esac
done
