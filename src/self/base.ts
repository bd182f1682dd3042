/**
 * A minimal Node base image built offline from what this machine has: the `node` program, the
 * shared libraries it loads (as `ldd` names them), the CA bundle, and /etc/passwd and
 * /etc/group with the non-root users Binnacle's images run as (65532 for the manager, 1001 for
 * the helm-operator variant). No base is pulled, so `build-self-image` can run where no registry
 * on the internet is reachable. Same machine, same files: same digest (the layer is a
 * deterministic tar, with no build time in the config).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { buildImage, pushImage, RegistryClient, type PushResult } from '../oci/index.js';
import { BinnacleError } from '../util/errors.js';

/** Where the CA bundle is on Debian-like systems, and where the image keeps it. */
export const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

export const BASE_PASSWD = ['root:x:0:0:root:/root:/sbin/nologin', 'helm:x:1001:0:helm:/opt/helm:/sbin/nologin', 'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin', ''].join('\n');
export const BASE_GROUP = ['root:x:0:', 'nonroot:x:65532:', ''].join('\n');

/** The absolute paths `ldd` prints for a program: each library it resolves, and the loader. */
export function parseLdd(output: string): string[] {
  const out: string[] = [];
  for (const line of output.split('\n')) {
    const arrow = /=>\s+(\S+)\s+\(/.exec(line);
    const bare = /^\s*(\/\S+)\s+\(/.exec(line);
    const path = arrow?.[1] ?? bare?.[1];
    if (path !== undefined && isAbsolute(path)) out.push(path);
    else if (/=>\s+not found/.test(line)) throw new BinnacleError('terminal', 'BASE_IMAGE_LIBRARY_MISSING', `ldd: ${line.trim()}`);
  }
  return [...new Set(out)].sort();
}

export interface NodeBaseOptions {
  /** Where to push: `registry/repo:tag`. */
  target: string;
  client?: RegistryClient;
  /** The Node program to put in (default: the one running this process). */
  node?: string;
}

export interface NodeBase extends PushResult {
  nodeVersion: string;
  files: string[];
}

function copyInto(tree: string, from: string, at: string, mode?: number): void {
  const to = join(tree, at);
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(realpathSync(from), to);
  if (mode !== undefined) chmodSync(to, mode);
}

/** The image's tree: node at /usr/bin/node, its libraries where the loader looks, /etc, /tmp. */
function stageBase(tree: string, node: string): string[] {
  const files = ['/usr/bin/node', ...parseLdd(execFileSync('ldd', [node], { encoding: 'utf8' }))];
  copyInto(tree, node, '/usr/bin/node', 0o755);
  for (const lib of files.slice(1)) copyInto(tree, lib, lib, 0o755);
  if (!existsSync(CA_BUNDLE)) throw new BinnacleError('terminal', 'BASE_IMAGE_CA_MISSING', `${CA_BUNDLE} is missing: install Debian's ca-certificates`);
  copyInto(tree, CA_BUNDLE, CA_BUNDLE, 0o644);
  mkdirSync(join(tree, 'etc'), { recursive: true });
  writeFileSync(join(tree, 'etc', 'passwd'), BASE_PASSWD, { mode: 0o644 });
  writeFileSync(join(tree, 'etc', 'group'), BASE_GROUP, { mode: 0o644 });
  writeFileSync(join(tree, 'etc', 'nsswitch.conf'), 'hosts: files dns\n', { mode: 0o644 });
  for (const d of ['tmp', 'home/nonroot', 'opt/helm']) mkdirSync(join(tree, d), { recursive: true });
  chmodSync(join(tree, 'tmp'), 0o1777);
  return [...files, CA_BUNDLE, '/etc/passwd', '/etc/group', '/etc/nsswitch.conf'];
}

/** Builds the base from this machine's Node and pushes it; the result's `ref` is by digest. */
export async function buildNodeBase(o: NodeBaseOptions): Promise<NodeBase> {
  const node = o.node ?? process.execPath;
  const nodeVersion = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  const work = await mkdtemp(join(tmpdir(), 'binnacle-node-base-'));
  try {
    const tree = join(work, 'tree');
    const files = stageBase(tree, node);
    const built = await buildImage({
      layers: [{ dir: tree, prefix: '/' }],
      labels: { 'org.opencontainers.image.title': 'binnacle-node-base', 'org.opencontainers.image.version': nodeVersion, 'org.opencontainers.image.description': "Node and the libraries it loads, from the building machine" },
      outputDir: join(work, 'layout'),
      config: { Env: ['PATH=/usr/local/bin:/usr/bin:/bin', `SSL_CERT_FILE=${CA_BUNDLE}`], Cmd: ['node'], User: '65532:65532', WorkingDir: '/' },
    });
    const pushed = await pushImage(built, o.target, o.client ?? new RegistryClient());
    return { ...pushed, nodeVersion, files };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
