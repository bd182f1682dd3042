import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'yaml';
import type { ClusterPki } from './certs.js';
import { apiserverHost, registryAddress, type ClusterState } from './cluster.js';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containerdConfig, describeLeftovers, registryMirrors, writeRegistryHosts, kubeChainsRemoval, kubeletConfig, kubeProxyConfig, mountsUnder, nodeChains, otherRealNodes, shimSocketPath, type RealNodePlan } from './real-node.js';

const plan: RealNodePlan = {
  nodeName: 'rn-real-node',
  bridge: 'bnr584b5edc',
  podSubnet: '10.244.103.0/24',
  gateway: '10.244.103.1',
  dir: '/state/rn/node',
  runDir: '/run/binnacle/584b5edc',
  cgroupRoot: '/binnacle-584b5edc',
  ports: { kubelet: 1, kubeletHealthz: 2, kubeProxyHealthz: 3, kubeProxyMetrics: 4 },
  processes: {},
};

const SAVE = [
  '*filter',
  ':INPUT ACCEPT [0:0]',
  ':FORWARD ACCEPT [0:0]',
  ':KUBE-FORWARD - [0:0]',
  ':CNI-HOSTPORT-DNAT - [0:0]',
  '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
  '-A FORWARD -j ACCEPT',
  '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
  'COMMIT',
  '*nat',
  ':POSTROUTING ACCEPT [0:0]',
  ':KUBE-POSTROUTING - [0:0]',
  '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
  'COMMIT',
  '',
].join('\n');

test('nodeChains lists the KUBE- and CNI- chains per table, and nothing else', () => {
  assert.deepEqual(nodeChains(SAVE), ['filter/KUBE-FORWARD', 'filter/CNI-HOSTPORT-DNAT', 'nat/KUBE-POSTROUTING']);
  assert.deepEqual(nodeChains('*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n'), []);
});

test('kubeChainsRemoval unhooks the KUBE- chains from the built-in ones, then flushes and deletes them, and leaves other rules', () => {
  const input = kubeChainsRemoval(SAVE);
  const lines = input.split('\n');
  assert.ok(lines.includes('-D FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD'));
  assert.ok(lines.includes('-D POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING'));
  assert.ok(lines.indexOf('-F KUBE-FORWARD') < lines.indexOf('-X KUBE-FORWARD'));
  assert.ok(!input.includes('-j ACCEPT'), 'a rule jumping elsewhere is kept');
  assert.equal(kubeChainsRemoval('*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n'), '');
});

test('mountsUnder finds mounts at or under the roots (escaped names too), deepest first, and not a sibling with the same prefix', () => {
  const line = (point: string): string => `36 25 0:32 / ${point} rw,relatime shared:1 - tmpfs tmpfs rw`;
  const info = [
    line('/state/rn/node/kubelet-root'),
    line('/state/rn/node/kubelet-root/pods/u/volumes/kubernetes.io~projected/a\\040b'),
    line('/state/rn/node-other'),
    line('/run/binnacle/584b5edc/containerd/io.containerd.grpc.v1.cri/netns/cni-1'),
    line('/proc'),
  ].join('\n');
  assert.deepEqual(mountsUnder([plan.dir, plan.runDir], info), [
    '/run/binnacle/584b5edc/containerd/io.containerd.grpc.v1.cri/netns/cni-1',
    '/state/rn/node/kubelet-root/pods/u/volumes/kubernetes.io~projected/a b',
    '/state/rn/node/kubelet-root',
  ]);
});

test('mountsUnder: a state dir reached through a symlink (a linked .cache) finds its mounts, which the kernel lists by their real path', () => {
  const base = mkdtempSync(join(tmpdir(), 'mounts-'));
  try {
    mkdirSync(join(base, 'real', 'rn', 'node'), { recursive: true });
    symlinkSync(join(base, 'real'), join(base, 'link'));
    const info = `36 25 0:32 / ${join(base, 'real', 'rn', 'node', 'kubelet-root')} rw,relatime shared:1 - tmpfs tmpfs rw`;
    assert.deepEqual(mountsUnder([join(base, 'link', 'rn', 'node')], info), [join(base, 'real', 'rn', 'node', 'kubelet-root')]);
    assert.deepEqual(mountsUnder([join(base, 'link', 'rn', 'absent')], info), [], 'a root that does not exist is looked for as given');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("shimSocketPath is containerd v2's own name for a shim's socket", () => {
  // Read from a shim of a real node: containerd-shim-runc-v2 -namespace k8s.io -id cd5a… -address /run/binnacle/584b5edc/containerd.sock
  assert.equal(
    shimSocketPath('/run/binnacle/584b5edc/containerd.sock', 'k8s.io', 'cd5a659adceefca3fba3950b0fff77960edc89353dd3328342218d5970fc1b6d'),
    '/run/containerd/s/c27f2dad7ee49f5e6c89b2a1bcf5cd6addee8aa07334cbb166f9d530ab37ae0f',
  );
});

test('containerd never lowers an oom_score_adj below its own, and keeps its state in the node run dir', () => {
  const toml = containerdConfig(plan, { runc: '/usr/sbin/runc', 'cni-plugins': '/cni' }, '127.0.0.1:5000');
  assert.match(toml, /^\s*restrict_oom_score_adj = true$/m);
  assert.match(toml, /^\s*Root = "\/run\/binnacle\/584b5edc\/runc"$/m);
  assert.match(toml, /^state = "\/run\/binnacle\/584b5edc\/containerd"$/m);
  assert.match(toml, /^\s*netns_mounts_under_state_dir = true$/m);
});

test('kubelet and kube-proxy leave their own oom_score_adj, listen on the node address or loopback only', () => {
  const pki = { caCert: '/pki/ca.crt' } as ClusterPki;
  const kubelet = parse(kubeletConfig(plan, pki)) as Record<string, unknown>;
  assert.equal(kubelet.oomScoreAdj, 0);
  assert.equal(kubelet.address, plan.gateway);
  assert.equal(kubelet.readOnlyPort, 0);
  assert.deepEqual(kubelet.authentication, { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: '/pki/ca.crt' } });
  const proxy = parse(kubeProxyConfig(plan, '/k')) as Record<string, unknown>;
  assert.equal(proxy.oomScoreAdj, 0);
  assert.equal(proxy.bindAddress, '127.0.0.1');
});

test('describeLeftovers names each kind of leftover, and nothing for a clean machine', () => {
  assert.deepEqual(describeLeftovers({ mounts: [], cgroups: [], chains: [], links: [], files: [], processes: [] }), []);
  assert.deepEqual(describeLeftovers({ mounts: ['/m'], cgroups: ['/c'], chains: ['iptables:nat/KUBE-X'], links: ['bnr1'], files: ['/f'], processes: [7] }), [
    'mount /m',
    'cgroup /c',
    'iptables chain iptables:nat/KUBE-X',
    'network link bnr1',
    'file /f',
    'process 7',
  ]);
});

test("with a real node the registry's address is the node's bridge address (containerd and the node's Pods both reach it), else loopback; the API server's is the same host", () => {
  const ports = { registry: 5000 } as ClusterState['ports'];
  assert.equal(registryAddress({ ports, realNode: plan }), '10.244.103.1:5000');
  assert.equal(apiserverHost({ realNode: plan }), '10.244.103.1');
  assert.equal(registryAddress({ ports }), '127.0.0.1:5000');
  // containerd pulls that address over plain http (its hosts.toml) and takes the sandbox image from it.
  const toml = containerdConfig({ ...plan, pauseImage: undefined }, {}, registryAddress({ ports, realNode: plan }));
  assert.match(toml, /sandbox = "10\.244\.103\.1:5000\/binnacle\/pause:latest"/);
});

test("otherRealNodes finds another checkout's kube-proxy on this machine (two would overwrite each other's iptables Service rules), not this node's own, nor other programs", () => {
  const proc = mkdtempSync(join(tmpdir(), 'binnacle-proc-'));
  try {
    const processes: Record<string, string[]> = {
      '101': ['/work/main/.cache/bin/kube-proxy', '--config=/work/main/.cache/clusters/dev-rn/node/kube-proxy.yaml', '--v=1'],
      '102': ['/work/ci7/.cache/bin/kube-proxy', '--config=/work/ci7/.cache/clusters/ci7-rn/node/kube-proxy.yaml', '--v=1'],
      '103': ['/usr/bin/vim', '--config=/work/x/node/kube-proxy.yaml'],
      '104': ['/usr/local/bin/kube-proxy', '--config=/etc/kubernetes/kube-proxy.yaml'],
    };
    for (const [pid, argv] of Object.entries(processes)) {
      mkdirSync(join(proc, pid));
      writeFileSync(join(proc, pid, 'cmdline'), `${argv.join('\0')}\0`);
    }
    mkdirSync(join(proc, 'self'));
    assert.deepEqual(otherRealNodes({ dir: '/work/main/.cache/clusters/dev-rn/node' }, proc), ['/work/ci7/.cache/clusters/ci7-rn/node/kube-proxy.yaml']);
    assert.deepEqual(otherRealNodes({ dir: '/work/ci7/.cache/clusters/ci7-rn/node' }, proc), ['/work/main/.cache/clusters/dev-rn/node/kube-proxy.yaml']);
  } finally {
    rmSync(proc, { recursive: true, force: true });
  }
});

test("registry mirrors: containerd's hosts file for each mirrored registry tries the cluster's registry first, then the registry itself; without mirrors only the cluster's own", () => {
  const dir = mkdtempSync(join(tmpdir(), 'binnacle-mirrors-'));
  try {
    writeRegistryHosts({ dir }, '10.244.103.1:5000');
    assert.deepEqual(readdirSync(join(dir, 'certs.d')), ['10.244.103.1:5000']);
    writeRegistryHosts({ dir, registryMirrors: registryMirrors(['quay.io', 'docker.io', 'quay.io'], '10.244.103.1:5000') }, '10.244.103.1:5000');
    assert.deepEqual(readdirSync(join(dir, 'certs.d')).sort(), ['10.244.103.1:5000', 'docker.io', 'quay.io']);
    const docker = readFileSync(join(dir, 'certs.d', 'docker.io', 'hosts.toml'), 'utf8');
    // Docker Hub's API is not at docker.io itself: containerd's own default for it.
    assert.match(docker, /^server = "https:\/\/registry-1\.docker\.io"$/m);
    assert.match(docker, /^\[host\."http:\/\/10\.244\.103\.1:5000"\]\n {2}capabilities = \["pull", "resolve"\]$/m);
    assert.match(readFileSync(join(dir, 'certs.d', 'quay.io', 'hosts.toml'), 'utf8'), /^server = "https:\/\/quay\.io"$/m);
    assert.match(readFileSync(join(dir, 'certs.d', '10.244.103.1:5000', 'hosts.toml'), 'utf8'), /^server = "http:\/\/10\.244\.103\.1:5000"$/m);
    // A shorter list: the mirror no longer listed is gone (containerd would go on using its file); none, only the cluster's own.
    writeRegistryHosts({ dir, registryMirrors: ['docker.io'] }, '10.244.103.1:5000');
    assert.deepEqual(readdirSync(join(dir, 'certs.d')).sort(), ['10.244.103.1:5000', 'docker.io']);
    writeRegistryHosts({ dir, registryMirrors: [] }, '10.244.103.1:5000');
    assert.deepEqual(readdirSync(join(dir, 'certs.d')), ['10.244.103.1:5000']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('registry mirrors: sorted without repeats; a value that is not a registry host (a path, upper case, a scheme, a port out of range, TOML) or is the cluster\'s own registry is refused naming the flag', () => {
  assert.deepEqual(registryMirrors(['quay.io', 'docker.io', 'quay.io', 'registry.k8s.io:443']), ['docker.io', 'quay.io', 'registry.k8s.io:443']);
  // Docker Hub's other names are the one containerd looks up.
  assert.deepEqual(registryMirrors(['index.docker.io']), ['docker.io']);
  assert.deepEqual(registryMirrors(['registry-1.docker.io']), ['registry-1.docker.io'], 'a reference naming it is looked up under that name');
  for (const bad of ['../etc', 'docker.io/library', 'Docker.io', 'https://quay.io', '', '.', 'a..b', 'quay.io:0', 'quay.io:65536', 'quay.io:99999', 'a b', `${'a'.repeat(250)}.io`, `${'a'.repeat(64)}.io`, 'x"]\n[host']) {
    assert.throws(() => registryMirrors([bad]), (e: Error & { code?: string }) => e.code === 'CLUSTER_BAD_MIRROR' && e.message.startsWith(`--registry-mirror ${JSON.stringify(bad)}`), bad);
  }
  assert.throws(() => registryMirrors(['10.244.103.1:5000'], '10.244.103.1:5000'), /cluster's own registry/);
});
