#!/usr/bin/env bash
# `npm run olmv1-scenarios:real-node [-- feature paths]`: operator-controller v1.11.0's scenarios
# that reach the manager's Pods (metrics.feature and tls.feature by default: port-forwards to its
# metrics Service and Pods, TLS profiles patched into its Deployment and rolled out), and the
# `@ProgressDeadline` ones of revision.feature (a Deployment that never becomes Available, one
# whose readiness probe passes only after 65 s: kwok's Pods are ready at once) and
# install.feature's operator with webhooks (where.ts REAL_NODE_SCENARIOS), against
# Binnacle's manager in-cluster on a real node, as OLM v1 runs. From a fresh clone: builds the
# control plane, brings up a cluster with a real node (root: namespaces, cgroups, iptables),
# builds Binnacle's image (its Node base too) and pushes it to the cluster's registry,
# `install-self`s it, runs the scenarios with OLMV1_SCENARIOS_IN_CLUSTER, and takes the cluster
# down (OLMV1_SCENARIOS_KEEP_CLUSTER=1 keeps it). Every Pod of the run lands on the real node
# (its taint removed, kwok's node cordoned), as on upstream's kind cluster. This machine does
# not reach Docker Hub or quay.io: the node's containerd mirrors both from the cluster's registry
# (`cluster up --registry-mirror`). The scenario's `busybox:1.36` is Debian's busybox-static
# pushed there under that name (a stand-in: only its `sleep` and `true` are used), and
# `quay.io/olmtest/webhook-operator:0.0.4` is test/olmv1-scenarios/webhook-operator (a stand-in
# serving the webhooks the scenario calls, from the flags, ports and paths of its CSV). The other
# features run with `npm run olmv1-scenarios` (the manager in that process, on kwok).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source hack/lib.sh
ensure_cluster_tools
ensure_real_node_packages
# A static busybox (Debian's busybox package is linked dynamically: alone in an image it cannot run).
static_busybox() { [ -x /bin/busybox ] && command -v ldd >/dev/null && ! ldd /bin/busybox >/dev/null 2>&1; }
static_busybox || { step "install Debian's busybox-static (the scenarios' busybox image)"; apt_install busybox-static; }
static_busybox || { echo "real-node.sh: /bin/busybox is not a static binary after installing busybox-static" >&2; exit 1; }
command -v go >/dev/null || { echo "real-node.sh: Go is needed to build the scenarios' webhook operator stand-in (test/olmv1-scenarios/webhook-operator); install it from https://go.dev/dl" >&2; exit 1; }
export BINNACLE_FROM_SOURCE=1
binnacle() { node "$root/bin/binnacle.js" "$@"; }
field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[process.argv[1]]))' "$1"; }

name=${OLMV1_SCENARIOS_CLUSTER:-olmv1-rn}
down() { [ "${OLMV1_SCENARIOS_KEEP_CLUSTER:-}" = 1 ] || binnacle cluster down --name "$name" >/dev/null 2>&1 || true; }
trap down EXIT
step "binnacle cluster up --name $name --real-node --registry-mirror docker.io --registry-mirror quay.io"
up=$(binnacle cluster up --name "$name" --real-node --registry-mirror docker.io --registry-mirror quay.io -o json)
export BINNACLE_E2E_KUBECONFIG=$(echo "$up" | field kubeconfig)
export BINNACLE_E2E_REGISTRY=$(echo "$up" | field registry)

step "build Binnacle's image from this tree and push it to $BINNACLE_E2E_REGISTRY"
npm run build >/dev/null
base=$(binnacle build-node-base -t "$BINNACLE_E2E_REGISTRY/binnacle/node-base:scenarios" -o json | field ref)
image=$(binnacle build-self-image --base "$base" -t "$BINNACLE_E2E_REGISTRY/binnacle/binnacle:scenarios" -o json | field ref)

kc() { kubectl --kubeconfig "$BINNACLE_E2E_KUBECONFIG" "$@"; }
step "busybox:1.36 in the cluster's registry, which the node's containerd mirrors docker.io from"
tree=.cache/olmv1-scenarios/busybox-tree
rm -rf "$tree" .cache/olmv1-scenarios/busybox-layout && mkdir -p "$tree/bin"
cp /bin/busybox "$tree/bin/busybox"
for applet in sh sleep true; do ln -s busybox "$tree/bin/$applet"; done
binnacle image build --layer "$tree:/" --layout .cache/olmv1-scenarios/busybox-layout --insecure \
  --label "org.opencontainers.image.description=Debian's busybox-static, standing in for docker.io/library/busybox:1.36 on a machine offline" \
  --push "$BINNACLE_E2E_REGISTRY/library/busybox:1.36" >/dev/null

step "quay.io/olmtest/webhook-operator:0.0.4 in the cluster's registry: the stand-in (test/olmv1-scenarios/webhook-operator)"
tree=.cache/olmv1-scenarios/webhook-operator-tree
rm -rf "$tree" .cache/olmv1-scenarios/webhook-operator-layout && mkdir -p "$tree"
(cd test/olmv1-scenarios/webhook-operator && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$root/$tree/manager" .)
binnacle image build --layer "$tree:/" --layout .cache/olmv1-scenarios/webhook-operator-layout --insecure --entrypoint /manager --user 65532:65532 \
  --label "org.opencontainers.image.description=Binnacle's test stand-in for quay.io/olmtest/webhook-operator:0.0.4 (test/olmv1-scenarios/webhook-operator)" \
  --push "$BINNACLE_E2E_REGISTRY/olmtest/webhook-operator:0.0.4" >/dev/null

step "every Pod of the run on the real node: its taint removed, the other nodes cordoned"
node_name=$(echo "$up" | field realNode)
kc taint node "$node_name" binnacle.dev/real-node:NoSchedule- >/dev/null 2>&1 || true
for n in $(kc get nodes -o name); do [ "$n" = "node/$node_name" ] || kc cordon "$n" >/dev/null; done

step "the installer OLM v1 ClusterExtensions and ClusterObjectSets install as (cluster-admin, as upstream's e2e gives operator-controller)"
kc create namespace olmv1-scenarios-installer --dry-run=client -o yaml | kc apply -f - >/dev/null
kc -n olmv1-scenarios-installer create serviceaccount installer --dry-run=client -o yaml | kc apply -f - >/dev/null
kc create clusterrolebinding olmv1-scenarios-installer --clusterrole=cluster-admin --serviceaccount=olmv1-scenarios-installer:installer --dry-run=client -o yaml | kc apply -f - >/dev/null

step "install-self $image (two Pods, at debug level)"
# The registry listens on the node's bridge address: plain http for the manager there too.
# Two Pods, as upstream's HA suite runs catalogd (ha.feature); debug, so that each reconcile's end
# is logged as OLM v1's `reconcile ending` is (ha-steps.ts reads the leader's log).
binnacle install-self --image "$image" --insecure-registry "$BINNACLE_E2E_REGISTRY" --kubeconfig "$BINNACLE_E2E_KUBECONFIG" \
  --olmv1-installer olmv1-scenarios-installer/installer --olmv1-object-sets --replicas 2 --log-level debug
# Rolled out before any scenario: on a cluster brought up again from its kept state, the last run's
# Pods still read Available until the new ones replace them (OLM is available checks Available only).
kc -n binnacle-system rollout status deployment/binnacle-manager --timeout=5m

# where.ts lists them (the hooks skip the same ones on kwok).
# (An assignment fails the script when node fails; an empty list would run every feature.)
list=$(node --import tsx -e 'import("./test/olmv1-scenarios/where.ts").then((m) => console.log(m.realNodeFeatureArgs("test/vendor/operator-controller-v1.11.0/test/e2e/features").join("\n")))')
[ -n "$list" ] || { echo "real-node.sh: test/olmv1-scenarios/where.ts listed no scenarios" >&2; exit 1; }
mapfile -t features <<<"$list"
[ $# -gt 0 ] && features=("$@")
step "scenarios: ${features[*]}"
OLMV1_SCENARIOS_IN_CLUSTER=binnacle-system bash test/olmv1-scenarios/run.sh "${features[@]}"
