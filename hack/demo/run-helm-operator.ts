/**
 * The demo's stand-in for the Pod of an installed Helm operator: the local control plane's kubelet
 * is kwok, so no container runs. This starts the operator's own entry point as that Pod would:
 * its container's arguments, its ServiceAccount's identity (a TokenRequest token), the chart files
 * its ConfigMap volume would mount at /opt/helm, and WATCH_NAMESPACE from the Deployment.
 *
 * usage: node --import tsx hack/demo/run-helm-operator.ts NAMESPACE DEPLOYMENT CONFIGMAP WORKDIR
 * Prints the operator's PID; its log goes to WORKDIR/operator.log.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, openSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { filesOfConfigMap } from '../../src/publish/helm-bundle/index.js';
import type { KubeObject } from '../../src/kube/types.js';

const [namespace, deployment, configMap, workArg] = process.argv.slice(2);
if (namespace === undefined || deployment === undefined || configMap === undefined || workArg === undefined) {
  console.error('usage: run-helm-operator.ts NAMESPACE DEPLOYMENT CONFIGMAP WORKDIR');
  process.exit(2);
}
const work = resolve(workArg);
const root = resolve(import.meta.dirname, '..', '..');
const kubectl = (...args: string[]): string => execFileSync('kubectl', args, { encoding: 'utf8' });

const cm = JSON.parse(kubectl('get', 'configmap', configMap, '-n', namespace, '-o', 'json')) as KubeObject;
const opt = join(work, 'opt-helm');
for (const [rel, data] of filesOfConfigMap(cm)) {
  mkdirSync(dirname(join(opt, rel)), { recursive: true });
  writeFileSync(join(opt, rel), data);
}
const dep = JSON.parse(kubectl('get', 'deployment', deployment, '-n', namespace, '-o', 'json')) as {
  spec: { template: { metadata: { annotations?: Record<string, string> }; spec: { serviceAccountName: string; containers: { args?: string[] }[] } } };
};
const pod = dep.spec.template;
const token = kubectl('create', 'token', pod.spec.serviceAccountName, '-n', namespace, '--duration', '24h').trim();
const admin = parse(kubectl('config', 'view', '--raw', '--minify', '-o', 'yaml')) as { clusters: { name: string; cluster: Record<string, unknown> }[] };
const cluster = admin.clusters[0];
if (cluster === undefined) throw new Error('kubectl config view: no cluster in the current context');
const kubeconfig = join(work, 'operator.kubeconfig');
writeFileSync(
  kubeconfig,
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [cluster],
    users: [{ name: 'operator', user: { token } }],
    contexts: [{ name: 'operator', context: { cluster: cluster.name, user: 'operator', namespace } }],
    'current-context': 'operator',
  }),
);
const args = (pod.spec.containers[0]?.args ?? []).map((a) => a.replace('$(POD_NAMESPACE)', namespace).replace('/opt/helm', opt));
const log = openSync(join(work, 'operator.log'), 'a');
const child = spawn(process.execPath, [join(root, 'bin', 'binnacle.js'), ...args, '--kubeconfig', kubeconfig], {
  cwd: root,
  detached: true,
  stdio: ['ignore', log, log],
  env: { ...process.env, WATCH_NAMESPACE: pod.metadata.annotations?.['olm.targetNamespaces'] ?? '', POD_NAMESPACE: namespace },
});
child.unref();
console.log(child.pid);
