/**
 * Helm's engine, both ways it runs (WebAssembly in worker threads, and the native helm-engine
 * process), against the `helm` CLI built from the same module: bad input fails with Helm's own
 * error text (naming the chart file and template line), `lookup` reads through the host with the
 * identity of the render that asked, a subchart renders on its own, and the engine survives every
 * failure; the native process killed under a render fails that render alone.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import { createHelmEngine, HelmError, type HelmEngineKind, type HelmEngineOptions, type TemplateRequest } from './index.js';
import { engineChildren } from './engine-children.test-helper.js';

/** The witness `helm` (Helm 4, built by hack/build-tools.sh into the tools folder, BINNACLE_BIN_DIR when set). */
const HELM = join(process.env.BINNACLE_BIN_DIR ?? join(import.meta.dirname, '..', '..', '.cache', 'bin'), 'helm');
const DATA = join(import.meta.dirname, 'testdata');
const PELORUS = join(import.meta.dirname, '..', '..', '..', 'shared', 'corpus', 'charts', 'pelorus__pelorus');

function helmTemplate(args: string[]): Promise<{ ok: boolean; out: string; err: string }> {
  assert.ok(existsSync(HELM), `helm CLI not found at ${HELM}: build it with \`bash hack/build-tools.sh helm\``);
  assert.match(helmVersion(), /^v4\./, `${HELM} is not Helm 4, the engine's module: rebuild it with \`bash hack/build-tools.sh helm\``);
  return new Promise((resolve) => {
    execFile(HELM, ['template', ...args], { env: { ...process.env, HELM_CACHE_HOME: '/tmp/helm-cache', HELM_CONFIG_HOME: '/tmp/helm-config' } }, (err, stdout, stderr) => {
      const at = stderr.indexOf('Error: ');
      resolve({ ok: err === null, out: stdout, err: (at >= 0 ? stderr.slice(at + 7) : stderr).trim() });
    });
  });
}

let witnessVersion: string | undefined;
function helmVersion(): string {
  witnessVersion ??= execFileSync(HELM, ['version', '--template', '{{.Version}}'], { encoding: 'utf8' }).trim();
  return witnessVersion;
}

/** The variable `name` (as NAME=value) in the environment of the native engine process made with these options; undefined when it is not set. */
async function nativeEngineEnv(opts: HelmEngineOptions, name: string): Promise<string | undefined> {
  const engine = createHelmEngine(undefined, { engine: 'native', ...opts });
  try {
    await engine.inspect(join(DATA, 'schema'));
    const [pid] = engineChildren();
    return (await readFile(`/proc/${pid ?? 0}/environ`, 'utf8')).split('\0').find((e) => e.startsWith(`${name}=`));
  } finally {
    await engine.close();
  }
}

/** One ustar header + content; `name` goes in as it is, `..` included. */
function tarEntry(name: string, content: string): Buffer {
  const body = Buffer.from(content);
  const h = Buffer.alloc(512);
  h.write(name, 0, 100);
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(`${body.length.toString(8).padStart(11, '0')}\0`, 124);
  h.write('00000000000\0', 136);
  h.write('        ', 148);
  h.write('0', 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return Buffer.concat([h, body, Buffer.alloc((512 - (body.length % 512)) % 512)]);
}

/**
 * The keys of testdata/keys's Secret, each checked: RSA of the size sprig makes, and the
 * certificate signed by the CA of the same render with tls.key as its key.
 */
function checkedKeys(output: string): string[] {
  const data = (parseYaml(output.split('---\n').find((d) => d.includes('kind: Secret')) ?? '') as { stringData: Record<string, string> }).stringData;
  const keys: string[] = [];
  for (const [name, bits] of [['rsa-a', 4096], ['rsa-b', 4096], ['tls.key', 2048]] as const) {
    const key = createPrivateKey(data[name] ?? '');
    assert.equal(key.asymmetricKeyDetails?.modulusLength, bits, `${name} is an RSA key of ${bits} bits`);
    keys.push(data[name] ?? '');
  }
  const ca = new X509Certificate(data['ca.crt'] ?? '');
  const cert = new X509Certificate(data['tls.crt'] ?? '');
  assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey), 'the certificate is signed by the CA the same render made');
  assert.ok(cert.checkPrivateKey(createPrivateKey(data['tls.key'] ?? '')), 'tls.key is the key of the certificate');
  return keys;
}

const KINDS: HelmEngineKind[] = ['wasm', 'native'];

for (const kind of KINDS) describe(`Helm engine (${kind}) vs helm CLI`, () => {
  const engine = createHelmEngine(undefined, { engine: kind });
  after(() => engine.close());

  async function ours(req: TemplateRequest): Promise<{ ok: boolean; out: string; err: string }> {
    try {
      return { ok: true, out: (await engine.template(req)).output, err: '' };
    } catch (err) {
      assert.ok(err instanceof HelmError, `a HelmError, not ${String(err)}`);
      return { ok: false, out: '', err: err.message.trim() };
    }
  }

  // Helm lists schema violations in no fixed order (its validator walks a Go map): the helm
  // CLI itself prints them differently from run to run. Compare each run of `- ` lines as a set.
  const inAnyOrder = (message: string): string => {
    const out: string[] = [];
    let list: string[] = [];
    for (const line of [...message.split('\n'), '']) {
      if (line.startsWith('- ')) list.push(line);
      else {
        out.push(...list.sort(), line);
        list = [];
      }
    }
    return out.join('\n');
  };

  const bad: { name: string; args: string[]; req: TemplateRequest; mentions: RegExp }[] = [
    { name: 'a broken template', args: ['x', join(DATA, 'broken')], req: { chart: join(DATA, 'broken'), releaseName: 'x' }, mentions: /broken\/templates\/cm\.yaml:\d+/ },
    { name: '`required`', args: ['x', join(DATA, 'required')], req: { chart: join(DATA, 'required'), releaseName: 'x' }, mentions: /required\/templates\/cm\.yaml:\d+:\d+.*value a is required/ },
    { name: '`fail`', args: ['x', join(DATA, 'required'), '--set', 'a=1,b=true'], req: { chart: join(DATA, 'required'), releaseName: 'x', set: ['a=1,b=true'] }, mentions: /b must not be set/ },
    { name: 'a missing dependency', args: ['x', join(DATA, 'missing-dep')], req: { chart: join(DATA, 'missing-dep'), releaseName: 'x' }, mentions: /missing in charts\/ directory: absent/ },
    { name: 'values against values.schema.json', args: ['x', join(DATA, 'schema'), '--set', 'replicas=0,mode=slow'], req: { chart: join(DATA, 'schema'), releaseName: 'x', set: ['replicas=0,mode=slow'] }, mentions: /values don't meet the specifications of the schema/ },
    { name: 'a chart that does not exist', args: ['x', join(DATA, 'no-such-chart')], req: { chart: join(DATA, 'no-such-chart'), releaseName: 'x' }, mentions: /no-such-chart/ },
  ];
  for (const c of bad) {
    test(`${c.name}: fails with Helm's own error`, async () => {
      const [helm, bin] = await Promise.all([helmTemplate(c.args), ours(c.req)]);
      assert.equal(helm.ok, false, 'helm fails too');
      assert.equal(bin.ok, false);
      assert.equal(inAnyOrder(bin.err), inAnyOrder(helm.err));
      assert.match(bin.err, c.mentions);
    });
  }

  test('a chart archive with path traversal is refused as Helm refuses it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'helm-traversal-'));
    try {
      const tgz = join(dir, 'evil-0.1.0.tgz');
      const tar = Buffer.concat([
        tarEntry('evil/Chart.yaml', 'apiVersion: v2\nname: evil\nversion: 0.1.0\n'),
        tarEntry('evil/../../escaped.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n'),
        Buffer.alloc(1024),
      ]);
      await writeFile(tgz, gzipSync(tar));
      const [helm, bin] = await Promise.all([helmTemplate(['x', tgz]), ours({ chart: tgz, releaseName: 'x' })]);
      assert.equal(helm.ok, false);
      assert.equal(bin.ok, false);
      assert.equal(bin.err, helm.err);
      assert.equal(existsSync(join(dir, '..', 'escaped.yaml')), false, 'nothing was written outside');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the engine keeps working after every failure above', async () => {
    const r = await engine.render({ chart: join(DATA, 'schema'), releaseName: 'ok' });
    assert.match(r.output, /replicas: "1"/);
  });

  // Found by fuzzing charts through the engine: a `tpl` that calls itself overflows the worker's
  // stack; the worker's late `exit` event then dropped the fresh worker the next call had started.
  test('a template that calls tpl on itself fails with a HelmError, and the next render works', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'helm-tpl-loop-'));
    try {
      await mkdir(join(dir, 'templates'));
      await writeFile(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: loop\nversion: 0.1.0\n');
      await writeFile(join(dir, 'values.yaml'), 't: "{{ tpl .Values.t . }}"\n');
      await writeFile(join(dir, 'templates', 'cm.yaml'), '{{ tpl .Values.t . }}\n');
      await assert.rejects(engine.render({ chart: dir, releaseName: 'x' }), (err: unknown) => {
        assert.ok(err instanceof HelmError, `a HelmError, not ${String(err)}`);
        return true;
      });
      const r = await engine.render({ chart: join(DATA, 'schema'), releaseName: 'ok' });
      assert.match(r.output, /replicas: "1"/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a template that does not end fails with HELM_TIMEOUT past the time bound, and the engine renders again', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'helm-endless-'));
    const bounded = createHelmEngine(undefined, { engine: kind, callTimeoutMs: 3000 });
    try {
      await mkdir(join(dir, 'templates'));
      await writeFile(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: endless\nversion: 0.1.0\n');
      // 10^10 iterations: it would end, some hours from now.
      await writeFile(join(dir, 'templates', 'cm.yaml'), '{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}\n');
      await bounded.inspect(join(DATA, 'schema')); // the worker is up, so the bound is the render's alone
      await assert.rejects(bounded.render({ chart: dir, releaseName: 'x' }), (err: unknown) => {
        assert.ok(err instanceof HelmError, `a HelmError, not ${String(err)}`);
        assert.equal(err.code, 'HELM_TIMEOUT');
        assert.equal(err.phase, 'timeout');
        return true;
      });
      const r = await bounded.render({ chart: join(DATA, 'schema'), releaseName: 'ok' });
      assert.match(r.output, /replicas: "1"/);
    } finally {
      await bounded.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('lookup reads through the host; offline it answers empty, as helm template does', async () => {
    const seen: string[] = [];
    const answer = (method: string, uri: string): { status: number; body: string } => {
      seen.push(`${method} ${uri}`);
      const path = uri.split('?')[0] ?? uri;
      if (path === '/api/v1') return { status: 200, body: JSON.stringify({ kind: 'APIResourceList', groupVersion: 'v1', resources: [{ name: 'namespaces', namespaced: false, kind: 'Namespace', verbs: ['get'] }, { name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['get'] }] }) };
      if (path.startsWith('/api/v1/namespaces/kube-system')) return { status: 200, body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system', uid: 'uid-from-host' } }) };
      return { status: 404, body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }) };
    };
    const online = await engine.render({
      chart: join(DATA, 'lookup'),
      releaseName: 'x',
      lookup: (method, uri) => Promise.resolve(answer(method, uri)),
    });
    assert.match(online.output, /uid: "uid-from-host"/);
    assert.match(online.output, /missing: "0"/);
    assert.ok(seen.some((s) => s.startsWith('GET /api/v1/namespaces/kube-system')), `requests: ${seen.join(', ')}`);
    const offline = await engine.render({ chart: join(DATA, 'lookup'), releaseName: 'x' });
    const helm = await helmTemplate(['x', join(DATA, 'lookup')]);
    assert.equal(offline.output, helm.out);
    assert.match(offline.output, /uid: "none"/);
  });

  test('sprig makes RSA keys (wasm: through the host; native: Go\'s own): each one valid, used once, also for renders side by side', async () => {
    const outs = await Promise.all(['k1', 'k2'].map((releaseName) => engine.render({ chart: join(DATA, 'keys'), releaseName })));
    const keys = outs.flatMap(({ output }) => checkedKeys(output));
    assert.equal(new Set(keys).size, keys.length, 'no key is handed out twice');
  });

  test('renders one after another take the spare RSA keys the engine searched for meanwhile: each valid, none handed out twice', async () => {
    // The first render asks for each size (none ready); every later one finds a spare per size
    // and takes it, and two keys of one size in one render (rsa-a, rsa-b) are two keys.
    const keys: string[] = [];
    for (const releaseName of ['s1', 's2', 's3']) keys.push(...checkedKeys((await engine.render({ chart: join(DATA, 'keys'), releaseName })).output));
    assert.equal(keys.length, 9);
    assert.equal(new Set(keys).size, keys.length, 'no key is handed out twice');
  });

  test('spareKeys: false searches each key in the render that asks: keys as valid, none handed out twice', async () => {
    const inline = createHelmEngine(undefined, { engine: kind, spareKeys: false });
    try {
      const keys: string[] = [];
      for (const releaseName of ['i1', 'i2']) keys.push(...checkedKeys((await inline.render({ chart: join(DATA, 'keys'), releaseName })).output));
      assert.equal(keys.length, 6);
      assert.equal(new Set(keys).size, keys.length, 'no key is handed out twice');
    } finally {
      await inline.close();
    }
  });

  test('waiting calls are taken tenant by tenant: one namespace queuing many renders delays another by one call', async () => {
    const one = createHelmEngine(undefined, { engine: kind, threads: 1 });
    try {
      const done: string[] = [];
      const call = (ns: string, i: number): Promise<void> =>
        one.template({ chart: PELORUS, releaseName: `r${i}`, namespace: ns }).then((r) => {
          assert.match(r.output, new RegExp(`namespace: ${ns}`));
          done.push(`${ns}/${i}`);
        });
      // Five of the noisy tenant's calls queued before the quiet tenant's one: the quiet one is
      // second (after the call already running), not sixth; each tenant's own calls keep their order.
      const calls = [0, 1, 2, 3, 4].map((i) => call('noisy', i));
      calls.push(call('quiet', 0));
      await Promise.all(calls);
      assert.deepEqual(done, ['noisy/0', 'quiet/0', 'noisy/1', 'noisy/2', 'noisy/3', 'noisy/4']);
    } finally {
      await one.close();
    }
  });

  test('two engine instances render side by side and answer as one does', async () => {
    const pool = createHelmEngine(undefined, { engine: kind, threads: 2 });
    try {
      const req: TemplateRequest = { chart: PELORUS, releaseName: 'pool', namespace: 'ns' };
      const alone = (await engine.template(req)).output;
      assert.equal(engine.threads(), 1, 'one thread unless more are asked for, renders side by side included');
      const outs = await Promise.all([1, 2, 3, 4].map(() => pool.template(req)));
      assert.equal(pool.threads(), 2, 'a second thread starts while the first is busy');
      for (const o of outs) assert.equal(o.output, alone);
      // One idle thread is enough for calls one after another: no third thread.
      await pool.template(req);
      assert.equal(pool.threads(), 2);
    } finally {
      await pool.close();
    }
  });

  test('lookup of renders side by side reaches each render\'s own transport, through the read-only gate', async () => {
    const pool = createHelmEngine(undefined, { engine: kind, threads: 2 });
    const as = (who: string, seen: string[]) => (method: string, uri: string): Promise<{ status: number; body: string }> => {
      seen.push(`${method} ${uri}`);
      const path = uri.split('?')[0] ?? uri;
      if (path === '/api/v1') return Promise.resolve({ status: 200, body: JSON.stringify({ kind: 'APIResourceList', groupVersion: 'v1', resources: [{ name: 'namespaces', namespaced: false, kind: 'Namespace', verbs: ['get'] }] }) });
      if (path.startsWith('/api/v1/namespaces/kube-system')) return Promise.resolve({ status: 200, body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system', uid: `uid-of-${who}` } }) });
      return Promise.resolve({ status: 404, body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }) });
    };
    try {
      const seenA: string[] = [];
      const seenB: string[] = [];
      const [a, b] = await Promise.all([
        pool.render({ chart: join(DATA, 'lookup'), releaseName: 'a', lookup: as('alice', seenA) }),
        pool.render({ chart: join(DATA, 'lookup'), releaseName: 'b', lookup: as('bob', seenB) }),
      ]);
      assert.match(a.output, /uid: "uid-of-alice"/);
      assert.match(b.output, /uid: "uid-of-bob"/);
      assert.ok(seenA.length > 0 && seenB.length > 0);
      for (const s of [...seenA, ...seenB]) assert.match(s, /^GET \//, 'only reads reach a transport');
    } finally {
      await pool.close();
    }
  });

  test('a subchart renders on its own (a Helm-operator kind served by a subchart)', async () => {
    const r = await engine.render({ chart: PELORUS, releaseName: 'x', subchart: 'exporters' });
    const sources = [...r.output.matchAll(/# Source: (\S+)/g)].map((m) => m[1] ?? '');
    assert.ok(sources.length > 0);
    assert.ok(sources.every((s) => s.startsWith('exporters/')), sources.join(', '));
    await assert.rejects(engine.render({ chart: PELORUS, releaseName: 'x', subchart: 'nope' }), /has no subchart "nope"/);
  });
});

describe('the native engine process killed under a render', () => {
  test('fails that render alone (HELM_ENGINE_CRASH), the render queued behind it succeeds, and the next render starts a new process', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'helm-killed-'));
    const engine = createHelmEngine(undefined, { engine: 'native' });
    try {
      await mkdir(join(dir, 'templates'));
      await writeFile(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: endless\nversion: 0.1.0\n');
      await writeFile(join(dir, 'templates', 'cm.yaml'), '{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}\n');
      await engine.inspect(join(DATA, 'schema'));
      const [first] = engineChildren();
      assert.ok(first !== undefined, 'a helm-engine child process runs');
      const stuck = engine.render({ chart: dir, releaseName: 'x' });
      const queued = engine.render({ chart: join(DATA, 'schema'), releaseName: 'queued' });
      await new Promise((r) => setTimeout(r, 300));
      process.kill(first, 'SIGKILL');
      await assert.rejects(stuck, (err: unknown) => {
        assert.ok(err instanceof HelmError, `a HelmError, not ${String(err)}`);
        assert.equal(err.code, 'HELM_ENGINE_CRASH');
        assert.match(err.message, /exited \(signal SIGKILL\)/);
        return true;
      });
      assert.match((await queued).output, /replicas: "1"/);
      const second = engineChildren();
      assert.equal(second.length, 1);
      assert.notEqual(second[0], first, 'a new process');
      assert.match((await engine.render({ chart: join(DATA, 'schema'), releaseName: 'after' })).output, /replicas: "1"/);
    } finally {
      await engine.close();
      await rm(dir, { recursive: true, force: true });
    }
    assert.deepEqual(engineChildren(), [], 'close ends the process');
  });

  test("goGC is the process's GOGC, unless the host sets its own; none is given otherwise", { timeout: 60_000 }, async () => {
    const gogcOf = (goGC: number | undefined): Promise<string | undefined> => nativeEngineEnv(goGC === undefined ? {} : { goGC }, 'GOGC');
    const host = process.env.GOGC;
    try {
      delete process.env.GOGC;
      assert.equal(await gogcOf(50), 'GOGC=50');
      assert.equal(await gogcOf(undefined), undefined);
      process.env.GOGC = '75';
      assert.equal(await gogcOf(50), 'GOGC=75', "the host's own GOGC wins");
    } finally {
      if (host === undefined) delete process.env.GOGC;
      else process.env.GOGC = host;
    }
    assert.throws(() => createHelmEngine(undefined, { engine: 'native', goGC: 0 }), /goGC must be at least 1/);
  });

  test('spareKeys: false reaches the process as BINNACLE_HELM_SPARE_KEYS=off; by default it is not set', { timeout: 60_000 }, async () => {
    const spareSetting = (spareKeys: boolean | undefined): Promise<string | undefined> => nativeEngineEnv(spareKeys === undefined ? {} : { spareKeys }, 'BINNACLE_HELM_SPARE_KEYS');
    assert.equal(await spareSetting(false), 'BINNACLE_HELM_SPARE_KEYS=off');
    assert.equal(await spareSetting(undefined), undefined);
    assert.equal(await spareSetting(true), undefined);
  });

  test('an idle process exits after idleExitMs, and the next render starts another', { timeout: 60_000 }, async () => {
    const engine = createHelmEngine(undefined, { engine: 'native', idleExitMs: 200 });
    try {
      assert.match((await engine.render({ chart: join(DATA, 'schema'), releaseName: 'a' })).output, /replicas: "1"/);
      assert.equal(engineChildren().length, 1);
      for (let i = 0; i < 100 && engineChildren().length > 0; i++) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(engineChildren(), [], 'the idle process exited');
      assert.match((await engine.render({ chart: join(DATA, 'schema'), releaseName: 'b' })).output, /replicas: "1"/);
      assert.equal(engineChildren().length, 1);
    } finally {
      await engine.close();
    }
  });
});
