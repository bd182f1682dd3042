#!/usr/bin/env bash
# The main job on the built-in local control plane, from a fresh clone: install what is missing,
# build the control plane's programs, bring the cluster up, and show Binnacle working on it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source hack/lib.sh

ensure_node_modules
step "build control-plane tools (cached in .cache/bin; minutes the first time)"
bash hack/build-tools.sh
export PATH="$root/.cache/bin:$PATH"
binnacle() { node "$root/bin/binnacle.js" "$@"; }

step "binnacle cluster up"
binnacle cluster up
export KUBECONFIG=$(binnacle cluster kubeconfig --path)

step "binnacle cluster status"
binnacle cluster status

step "kubectl get nodes"
kubectl get nodes -o wide

step "a Deployment becomes Available through the real scheduler, controller manager and kwok"
kubectl create namespace demo --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl -n demo create deployment hello --image=registry.example/hello:1 --replicas=2 --dry-run=client -o yaml | kubectl apply --server-side -f -
kubectl -n demo rollout status deployment/hello --timeout=120s
kubectl -n demo get deployment,pods -o wide

echo
echo "The cluster keeps running. Use it with: export KUBECONFIG=$KUBECONFIG"
echo "Stop it with: node bin/binnacle.js cluster down"
