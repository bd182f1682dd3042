#!/usr/bin/env bash
# Writes test/e2e/fixtures/helm3-release.json: the release record Secret Helm 3 (v3.22.0, built
# from the Go module proxy) writes for `helm install h3 <pushgateway> -n helm3-made --set
# replicaCount=1 --set podLabels.h3=yes`. test/e2e/helm-operator.test.ts ("a release Helm 3
# installed…") plants it, creates the objects as Helm 3's install does, and has Binnacle on Helm 4
# adopt and upgrade it. Run once by hand, against a local control plane:
#   KUBECONFIG=… bash hack/make-helm3-record.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
GOBIN="$work/bin" CGO_ENABLED=0 go install -trimpath helm.sh/helm/v3/cmd/helm@v3.22.0
chart="$root/../shared/corpus/charts/prometheus-community__prometheus-pushgateway"
kubectl create namespace helm3-made
"$work/bin/helm" install h3 "$chart" -n helm3-made --set replicaCount=1 --set podLabels.h3=yes
kubectl get secret sh.helm.release.v1.h3.v1 -n helm3-made -o json |
  node -e 'const s = JSON.parse(require("fs").readFileSync(0, "utf8"));
    const { name, labels } = s.metadata;
    process.stdout.write(JSON.stringify({ apiVersion: "v1", kind: "Secret", type: s.type, metadata: { name, labels }, data: s.data }, null, 2) + "\n");' \
  > "$root/test/e2e/fixtures/helm3-release.json"
"$work/bin/helm" uninstall h3 -n helm3-made
kubectl delete namespace helm3-made --wait=false
