#!/usr/bin/env bash
# `npm run olmv1-scenarios:real-node [-- feature paths]`: operator-controller v1.11.0's scenarios
# that reach the manager's Pods (metrics.feature and tls.feature by default: port-forwards to its
# metrics Service and Pods, TLS profiles patched into its Deployment and rolled out) against
# Binnacle's manager in-cluster on a real node, as OLM v1 runs. From a fresh clone: builds the
# control plane, brings up a cluster with a real node (root: namespaces, cgroups, iptables),
# builds Binnacle's image (its Node base too) and pushes it to the cluster's registry,
# `install-self`s it, runs the scenarios with OLMV1_SCENARIOS_IN_CLUSTER, and takes the cluster
# down (OLMV1_SCENARIOS_KEEP_CLUSTER=1 keeps it). The other features run with
# `npm run olmv1-scenarios` (the manager in that process, on kwok).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source hack/lib.sh
ensure_cluster_tools
ensure_real_node_packages
export BINNACLE_FROM_SOURCE=1
binnacle() { node "$root/bin/binnacle.js" "$@"; }
field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[process.argv[1]]))' "$1"; }

name=${OLMV1_SCENARIOS_CLUSTER:-olmv1-rn}
down() { [ "${OLMV1_SCENARIOS_KEEP_CLUSTER:-}" = 1 ] || binnacle cluster down --name "$name" >/dev/null 2>&1 || true; }
trap down EXIT
step "binnacle cluster up --name $name --real-node"
up=$(binnacle cluster up --name "$name" --real-node -o json)
export BINNACLE_E2E_KUBECONFIG=$(echo "$up" | field kubeconfig)
export BINNACLE_E2E_REGISTRY=$(echo "$up" | field registry)

step "build Binnacle's image from this tree and push it to $BINNACLE_E2E_REGISTRY"
npm run build >/dev/null
base=$(binnacle build-node-base -t "$BINNACLE_E2E_REGISTRY/binnacle/node-base:scenarios" -o json | field ref)
image=$(binnacle build-self-image --base "$base" -t "$BINNACLE_E2E_REGISTRY/binnacle/binnacle:scenarios" -o json | field ref)

step "install-self $image"
# The registry listens on the node's bridge address: plain http for the manager there too.
binnacle install-self --image "$image" --insecure-registry "$BINNACLE_E2E_REGISTRY" --kubeconfig "$BINNACLE_E2E_KUBECONFIG"

features=(test/vendor/operator-controller-v1.11.0/test/e2e/features/metrics.feature test/vendor/operator-controller-v1.11.0/test/e2e/features/tls.feature)
[ $# -gt 0 ] && features=("$@")
step "scenarios: ${features[*]}"
OLMV1_SCENARIOS_IN_CLUSTER=binnacle-system bash test/olmv1-scenarios/run.sh "${features[@]}"
