import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// Inside the project, so that the bundle's imports of the package's dependencies resolve (node_modules).
const WORK = fileURLToPath(new URL('../../.cache/test-artifacts/', import.meta.url));
import { after, describe, it } from 'node:test';
import * as ClientNode from '@kubernetes/client-node';
import { bundleKubeConfig } from './kube-config-bundle.js';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: 'https://127.0.0.1:6443', certificate-authority-data: ${Buffer.from('CA').toString('base64')}}
- name: b
  cluster: {server: 'https://10.0.0.1:443', insecure-skip-tls-verify: true}
users:
- name: cert
  user: {client-certificate-data: ${Buffer.from('CERT').toString('base64')}, client-key-data: ${Buffer.from('KEY').toString('base64')}}
- name: token
  user: {token: sekret}
contexts:
- {name: one, context: {cluster: a, user: cert, namespace: ns1}}
- {name: two, context: {cluster: b, user: token}}
current-context: two
`;

describe('the bundled KubeConfig (npm run build: dist/vendor/kubeconfig.js)', async () => {
  await mkdir(WORK, { recursive: true });
  const dir = await mkdtemp(join(WORK, 'kubeconfig-bundle-'));
  after(() => rm(dir, { recursive: true, force: true }));
  const out = join(dir, 'vendor', 'kubeconfig.js');
  await bundleKubeConfig(out);
  const bundled = (await import(pathToFileURL(out).href)) as Pick<typeof ClientNode, 'KubeConfig'>;
  const file = join(dir, 'config');
  await writeFile(file, KUBECONFIG);

  it('is KubeConfig alone: a fraction of the package', async () => {
    assert.equal(typeof bundled.KubeConfig, 'function');
    const size = (await stat(out)).size;
    // KubeConfig and the little of the generated API it uses (630 KB when all of that was kept).
    assert.ok(size > 10_000 && size < 150_000, `bundle is ${size} bytes`);
  });

  it('reads a kubeconfig and authenticates requests exactly as the package does', async () => {
    const ours = new bundled.KubeConfig();
    const theirs = new ClientNode.KubeConfig();
    ours.loadFromFile(file);
    theirs.loadFromFile(file);
    for (const context of ['one', 'two']) {
      ours.setCurrentContext(context);
      theirs.setCurrentContext(context);
      assert.deepEqual(ours.getCurrentCluster(), theirs.getCurrentCluster());
      assert.deepEqual(ours.getCurrentUser(), theirs.getCurrentUser());
      assert.deepEqual(ours.getContextObject(context), theirs.getContextObject(context));
      const a: https.RequestOptions = {};
      const b: https.RequestOptions = {};
      await ours.applyToHTTPSOptions(a);
      await theirs.applyToHTTPSOptions(b);
      // Each call makes its own https.Agent: compare what it was made with.
      const plain = (o: https.RequestOptions): unknown => ({ ...o, agent: (o.agent as (https.Agent & { options?: object }) | undefined)?.options });
      assert.deepEqual(plain(a), plain(b), context);
    }
    assert.equal(ours.getCurrentUser()?.token, 'sekret');
  });

  it("loads the package's optional dependencies (OIDC, proxies, fetch, YAML) only when a kubeconfig uses one", async () => {
    // A fresh process: this one has loaded the whole package already.
    const script = `
      const { KubeConfig } = await import(${JSON.stringify(pathToFileURL(out).href)});
      const { createRequire } = await import('node:module');
      const loaded = () => Object.keys(createRequire(${JSON.stringify(pathToFileURL(out).href)}).cache).filter((k) => /node_modules[\\/](openid-client|jsonpath-plus|socks-proxy-agent|hpagent|node-fetch|whatwg-url|rfc4648|js-yaml)[\\/]/.test(k)).length;
      const options = async (proxyUrl, server = 'https://127.0.0.1:6443') => {
        const kc = new KubeConfig();
        kc.loadFromOptions({ clusters: [{ name: 'c', server, ...(server.startsWith('http:') ? { skipTLSVerify: true } : {}), ...(proxyUrl ? { proxyUrl } : {}) }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
        const o = {};
        await kc.applyToHTTPSOptions(o);
        return o;
      };
      const plain = await options();
      const before = loaded();
      const viaProxy = await options('socks5://127.0.0.1:1080');
      // A plain-http server: the one place the package makes an agent of node:http's.
      const plainHttp = await options(undefined, 'http://127.0.0.1:8080');
      const httpAgent = plainHttp.agent instanceof createRequire(import.meta.url)('node:http').Agent && !(plainHttp.agent instanceof createRequire(import.meta.url)('node:https').Agent);
      const undici = process.moduleLoadList.some((m) => m.includes('undici'));
      console.log(JSON.stringify({ before, undici, httpAgent, after: loaded(), plainAuth: plain.headers?.Authorization, agent: viaProxy.agent?.constructor?.name, proxyAuth: viaProxy.headers?.Authorization }));
    `;
    const { execFileSync } = await import('node:child_process');
    const seen = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as Record<string, unknown>;
    assert.equal(seen.before, 0, 'none loaded for a kubeconfig without OIDC, auth providers, a proxy or a file (a Pod\'s in-cluster configuration)');
    assert.equal(seen.undici, false, 'nor undici (util/node-http.ts): the package imports node:http, which the bundle requires');
    assert.equal(seen.httpAgent, true, "a plain-http server's agent is node:http's, through the bundle's stand-in");
    assert.equal(seen.plainAuth, 'Bearer t');
    // A proxy-url: the SOCKS agent is loaded then, and used as the package uses it.
    assert.ok((seen.after as number) > 0);
    assert.equal(seen.agent, 'SocksProxyAgent');
    assert.equal(seen.proxyAuth, 'Bearer t');
  });
});
