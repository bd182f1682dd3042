#!/usr/bin/env bash
# Binnacle's main job on the built-in local control plane, from a fresh clone: install what is
# missing, build the control plane, bring it up, publish example operators from the corpus as
# bundle and catalog images to the local registry, start the manager, and install an operator
# with a dependency (node-healthcheck-operator needs poison-pill's API) and one with webhooks
# (opentelemetry-operator), printing their status as they go; then serve a Helm chart as an
# operator (a HelmOperator for a corpus chart pushed with helm push) and deploy one of its CRs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source hack/lib.sh
corpus=${BINNACLE_CORPUS:-$root/../shared/corpus/operatorhub-2021}

ensure_cluster_tools
export BINNACLE_FROM_SOURCE=1
binnacle() { node "$root/bin/binnacle.js" "$@"; }

# BINNACLE_DEMO_CLUSTER names another local cluster than the default one (CI's demo test, test/e2e/demo.test.ts).
cluster=(); [ -n "${BINNACLE_DEMO_CLUSTER:-}" ] && cluster=(--name "$BINNACLE_DEMO_CLUSTER")
step "binnacle cluster up ${cluster[*]}"
binnacle cluster up "${cluster[@]}"
export KUBECONFIG=$(binnacle cluster kubeconfig --path "${cluster[@]}")
registry=$(binnacle cluster up "${cluster[@]}" -o json 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).registry))')
binnacle cluster status "${cluster[@]}"

step "publish example operators from the corpus to the local registry ($registry)"
catalog=$(binnacle catalog publish --registry "$registry" --repository examples \
  "$corpus/node-healthcheck-operator" "$corpus/poison-pill-operator" "$corpus/opentelemetry-operator")
echo "catalog image: $catalog"

step "start the manager (log: .cache/demo/manager.log)"
mkdir -p .cache/demo
if [ -f .cache/demo/manager.pid ] && kill -0 "$(cat .cache/demo/manager.pid)" 2>/dev/null; then
  kill "$(cat .cache/demo/manager.pid)"; sleep 2
fi
if [ -f .cache/demo/pelorus-operator.pid ] && kill -0 "$(cat .cache/demo/pelorus-operator.pid)" 2>/dev/null; then
  kill "$(cat .cache/demo/pelorus-operator.pid)"
fi
nohup node bin/binnacle.js manager --leader-elect --data-dir .cache/demo/data \
  --metrics-bind-address 127.0.0.1:18080 --catalog-bind-address 127.0.0.1:18083 > .cache/demo/manager.log 2>&1 &
echo $! > .cache/demo/manager.pid
for _ in $(seq 1 60); do curl -sf 127.0.0.1:18080/readyz >/dev/null && break; sleep 1; done

step "create a ClusterCatalog from the catalog image"
kubectl apply --server-side -f - <<YAML
apiVersion: binnacle.dev/v1alpha1
kind: ClusterCatalog
metadata: { name: examples }
spec:
  source: { type: Image, image: { ref: "${catalog%@*}:latest", pollIntervalMinutes: 1 } }
YAML
kubectl wait clustercatalog/examples --for=condition=Serving --timeout=120s
kubectl get clustercatalogs

step "binnacle install node-healthcheck-operator (resolves its dependency on poison-pill's API)"
binnacle install node-healthcheck-operator --create-service-account --wait

step "binnacle install opentelemetry-operator (validating and mutating webhooks, Binnacle-issued certificates)"
binnacle install opentelemetry-operator --create-service-account --wait

step "a Helm chart as an operator: prometheus-pushgateway from the charts corpus, pushed with helm push"
charts=${BINNACLE_CHARTS_CORPUS:-$root/../shared/corpus/charts}
mkdir -p .cache/demo/charts
helm package "$charts/prometheus-community__prometheus-pushgateway" -d .cache/demo/charts >/dev/null
helm push .cache/demo/charts/prometheus-pushgateway-*.tgz "oci://$registry/charts" --plain-http
kubectl apply --server-side -f - <<YAML
apiVersion: binnacle.dev/v1alpha1
kind: HelmOperator
metadata: { name: pushgateway }
spec:
  chart: { oci: { ref: "oci://$registry/charts/prometheus-pushgateway", insecure: true }, version: ">=3.0.0" }
  kinds: [{ group: demo.binnacle.dev, version: v1alpha1, kind: Pushgateway }]
  # Each release acts as this ServiceAccount in its custom resource's own namespace, confined to it.
  serviceAccount: { name: pushgateway-release }
YAML
# Ready means kubectl can use the kind: its CRD Established, and the kind in the API server's
# discovery and OpenAPI v3 (until then Ready=False KindsPending names what is missing).
kubectl wait helmoperator/pushgateway --for=condition=Ready --timeout=180s
# kubectl keeps discovery in its own cache (~/.kube/cache), which may predate the kind (an earlier
# command here read it before the CRD existed). On a miss the demo asks again without that cache:
# the API server must answer now (Ready said so), and says so if it had to wait; then it refreshes
# kubectl's cache for what follows.
explain=(explain pushgateways.spec.replicaCount --api-version=demo.binnacle.dev/v1alpha1)
if ! kubectl "${explain[@]}" >/dev/null 2>&1; then
  # A fresh cache for the rest of the demo (KUBECACHEDIR): refreshing the old one left kubectl's
  # cached OpenAPI behind once (a cold CI), and explain failed after discovery had the kind.
  fresh=$(mktemp -d)
  seen=""
  for i in $(seq 1 30); do
    if kubectl --cache-dir "$fresh/$i" "${explain[@]}" >/dev/null 2>&1; then seen="$fresh/$i"; break; fi
    [ "$i" = 1 ] && echo "binnacle: kubectl does not see Pushgateway yet although the HelmOperator is Ready; asking again" >&2
    sleep 1
  done
  [ -n "$seen" ] || { echo "binnacle: kubectl still does not see Pushgateway 30 s after the HelmOperator said Ready" >&2; exit 1; }
  echo "binnacle: kubectl's discovery cache predated the Pushgateway kind; kubectl uses a fresh one from here ($seen)" >&2
  export KUBECACHEDIR="$seen"
fi
kubectl "${explain[@]}" | sed -n "1,8p"
# The team's namespace: its admin grants the release identity what the chart needs there.
kubectl create namespace metrics --dry-run=client -o yaml | kubectl apply -f -
kubectl create serviceaccount pushgateway-release -n metrics --dry-run=client -o yaml | kubectl apply -f -
kubectl create rolebinding pushgateway-release -n metrics --clusterrole=admin --serviceaccount=metrics:pushgateway-release --dry-run=client -o yaml | kubectl apply -f -
kubectl apply --server-side -f - <<YAML
apiVersion: demo.binnacle.dev/v1alpha1
kind: Pushgateway
metadata: { name: gateway, namespace: metrics }
spec: { replicaCount: 2 }
YAML
kubectl wait pushgateway/gateway -n metrics --for=condition=Deployed --timeout=180s
kubectl get pushgateway -n metrics

step "Pelorus: a Helm chart with a subchart becomes an operator, installed from a catalog with the operators it needs"
pelorus=.cache/demo/pelorus; rm -rf "$pelorus"; mkdir -p "$pelorus/grafana-input"
binnacle helm bundle "$charts/pelorus__pelorus" --kind Pelorus --kind Exporter=charts/exporters --version 2.0.13 --output-dir "$pelorus/catalog/pelorus/2.0.13"
# Pelorus needs grafana-operator 5's API (grafana.integreatly.org/v1beta1); the corpus has only
# grafana-operator 3 (integreatly.org/v1alpha1). A stand-in package provides the three CRDs.
for kind in Grafana GrafanaDashboard GrafanaDatasource; do
  plural=$(echo "$kind" | tr '[:upper:]' '[:lower:]')s
  cat >> "$pelorus/grafana-input/objects.yaml" <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: $plural.grafana.integreatly.org }
spec:
  group: grafana.integreatly.org
  names: { kind: $kind, listKind: ${kind}List, plural: $plural, singular: $(echo "$kind" | tr '[:upper:]' '[:lower:]') }
  scope: Namespaced
  versions: [{ name: v1beta1, served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } } }]
---
YAML
done
cat >> "$pelorus/grafana-input/objects.yaml" <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: { name: grafana-v1beta1-apis-controller }
spec:
  replicas: 1
  selector: { matchLabels: { app: grafana-v1beta1-apis } }
  template: { metadata: { labels: { app: grafana-v1beta1-apis } }, spec: { containers: [{ name: controller, image: registry.invalid/stand-in:5.0.0 }] } }
YAML
binnacle bundle generate --input "$pelorus/grafana-input" --output-dir "$pelorus/catalog/grafana-v1beta1-apis/5.0.0" --package grafana-v1beta1-apis --version 5.0.0 --channels stable >/dev/null
pelorus_catalog=$(binnacle catalog publish --registry "$registry" --repository pelorus \
  "$pelorus/catalog/pelorus" "$corpus/prometheus" "$pelorus/catalog/grafana-v1beta1-apis")
kubectl apply --server-side -f - <<YAML
apiVersion: binnacle.dev/v1alpha1
kind: ClusterCatalog
metadata: { name: pelorus }
spec:
  source: { type: Image, image: { ref: "$pelorus_catalog" } }
YAML
kubectl wait clustercatalog/pelorus --for=condition=Serving --timeout=120s
binnacle install pelorus --create-service-account --wait
# The operator's Pod is a kwok Pod: run its entry point here, as that Pod would (see the script).
operator_pid=$(node --import tsx hack/demo/run-helm-operator.ts pelorus pelorus-controller-manager pelorus-helm-charts "$pelorus")
echo "$operator_pid" > .cache/demo/pelorus-operator.pid
kubectl create namespace pelorus-demo --dry-run=client -o yaml | kubectl apply -f -
node -e '
  const y = require("yaml"), fs = require("fs");
  const csv = y.parse(fs.readFileSync(process.argv[1], "utf8"));
  const cr = JSON.parse(csv.metadata.annotations["alm-examples"]).find((e) => e.kind === "Pelorus");
  cr.metadata.namespace = "pelorus-demo";
  console.log(JSON.stringify(cr));' "$pelorus/catalog/pelorus/2.0.13/manifests/pelorus.clusterserviceversion.yaml" | kubectl create -f -
kubectl wait peloruses --all -n pelorus-demo --for=condition=Deployed --timeout=300s
kubectl get peloruses -n pelorus-demo -o jsonpath='{range .items[*].status.conditions[?(@.type=="OptionalObjectsSkipped")]}{.message}{"\n"}{end}'
kubectl get deployments,prometheuses.monitoring.coreos.com,grafanas.grafana.integreatly.org -n pelorus-demo

step "what is installed"
binnacle status
kubectl get bundledeployments
kubectl get deployments -A -l binnacle.dev/owner-kind=BundleDeployment
helm list -A

cat <<TXT

The cluster and the manager keep running:
  export KUBECONFIG=$KUBECONFIG
  node bin/binnacle.js status node-healthcheck-operator
  node bin/binnacle.js uninstall opentelemetry-operator --wait
Stop everything with: kill \$(cat .cache/demo/manager.pid) \$(cat .cache/demo/pelorus-operator.pid); node bin/binnacle.js cluster down
TXT
