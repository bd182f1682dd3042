#!/usr/bin/env bash
# Writes test/e2e/fixtures/binnacle-helm3-release.json: what Binnacle itself kept for a Helm
# operator's release while its engine was Helm 3 (helm.sh/helm/v3 v3.22.0, commit 60fff78, the last
# before the move to Helm 4): the trusted history record (the manager's namespace,
# binnacle.release.<uid>.v1) and its mirror in the release namespace (sh.helm.release.v1.b3.v1),
# written by that commit's own release store, from that commit's engine's render of the corpus's
# prometheus-pushgateway 3.8.0 for a Pushgateway `b3` in `binnacle-helm3-made`, and the objects the
# render made, with the owner marks that commit's applier stamps. The owner UID is a placeholder the e2e replaces with the custom resource's.
# test/e2e/helm-operator.test.ts ("a release Binnacle recorded under Helm 3 …") plants it and has
# Binnacle on Helm 4 carry the release on. Run once by hand (no cluster needed):
#   bash hack/make-binnacle-helm3-record.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
before=60fff78
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$root" archive "$before" | tar -x -C "$work"
ln -s "$root/node_modules" "$work/node_modules"
engine="$root/.cache/bench-helm-engine/before"  # bench/helm-engine-versions.ts builds the same there
BINNACLE_HELM_WASM_DIR="$engine" bash "$work/src/helm-engine/build.sh"
cat > "$work/make.ts" <<'EOF'
import { pino } from 'pino';
import { ReleaseRecords } from './src/apply/release-records.js';
import { ReleaseStore } from './src/apply/release-store.js';
import { stampOwnership } from './src/apply/ownership.js';
import { renderChart } from './src/helm/chart-render.js';
import { createHelmEngine } from './src/helm-engine/index.js';
import { FakeCluster } from './src/kube/fake-cluster.test-helper.js';

const [chart, systemNamespace] = process.argv.slice(2) as [string, string];
const release = { name: 'b3', namespace: 'binnacle-helm3-made' };
const owner = { kind: 'Pushgateway', name: 'b3', namespace: release.namespace, uid: '00000000-0000-4000-8000-0000000000b3', apiVersion: 'e2e.binnacle.dev/v1alpha1' };
const values = { replicaCount: 1, podLabels: { b3: 'yes' } };
const engine = createHelmEngine();
try {
  const r = await renderChart({ chart, chartDigest: 'sha256:recorded-under-helm-3', release, values, revision: 1, engine });
  const fake = new FakeCluster();
  const client = fake.client();
  const history = new ReleaseRecords({ client, namespace: systemNamespace, logger: pino({ level: 'silent' }), now: () => new Date('2026-12-01T10:00:00Z') }).bind(owner, release, new ReleaseStore(client, () => new Date('2026-12-01T10:00:00Z')));
  const at = '2026-12-01T10:00:00Z';
  await history.create({ name: release.name, namespace: release.namespace, revision: 1, status: 'deployed', description: 'Install complete', firstDeployed: at, lastDeployed: at, chart: r.chart, config: values, manifest: r.content.manifest, content: r.content, inputDigest: r.inputDigest, ownerGeneration: 1, owner });
  const secrets = (await client.list('v1', 'Secret')).items.map(({ metadata: { name, namespace, labels, annotations }, type, data }) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace, labels, ...(annotations === undefined ? {} : { annotations }) }, type, data }));
  process.stdout.write(`${JSON.stringify({ commit: process.env.BEFORE, helm: 'helm.sh/helm/v3 v3.22.0', ownerUid: owner.uid, secrets, objects: r.objects.map((o) => stampOwnership({ ...o, metadata: { ...o.metadata, namespace: o.metadata.namespace ?? release.namespace } }, owner, release)) }, null, 2)}\n`);
} finally {
  await engine.close();
}
EOF
# The chart as the e2e serves it (its own version, 3.8.0), from the corpus.
chart="$root/../shared/corpus/charts/prometheus-community__prometheus-pushgateway"
(cd "$work" && BEFORE=$before BINNACLE_HELM_WASM_DIR="$engine" node --import tsx make.ts "$chart" binnacle-system) > "$root/test/e2e/fixtures/binnacle-helm3-release.json"
echo "wrote test/e2e/fixtures/binnacle-helm3-release.json" >&2
