import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChartSourceError } from './errors.js';
import { describeChartRef, normalizeChartRef, parseChartRef, parseOciLocation } from './reference.js';

const refError = (err: unknown): boolean => err instanceof ChartSourceError && err.code === 'HELM_CHART_REF';
const DIGEST = `sha256:${'a'.repeat(64)}`;

test('local paths: .tgz and .tar.gz are archives, anything else a directory', () => {
  assert.deepEqual(parseChartRef('./charts/memcached'), { type: 'dir', path: './charts/memcached' });
  assert.deepEqual(parseChartRef('/tmp/memcached-7.0.1.tgz'), { type: 'archive', path: '/tmp/memcached-7.0.1.tgz' });
  assert.deepEqual(parseChartRef('memcached-7.0.1.TAR.GZ'), { type: 'archive', path: 'memcached-7.0.1.TAR.GZ' });
  assert.throws(() => parseChartRef('./memcached', { version: '1.2.3' }), refError);
  assert.throws(() => parseChartRef('  '), refError);
});

test('oci:// references keep tag, digest, version and insecure', () => {
  assert.deepEqual(parseChartRef('oci://127.0.0.1:5000/charts/memcached:7.0.1'), { type: 'oci', ref: 'oci://127.0.0.1:5000/charts/memcached:7.0.1' });
  assert.deepEqual(parseChartRef('oci://registry.example.com/charts/memcached', { version: '>=7 <8', insecure: true }), {
    type: 'oci',
    ref: 'oci://registry.example.com/charts/memcached',
    version: '>=7 <8',
    insecure: true,
  });
  // The same version as the tag is fine (Helm allows it); a different one is not.
  assert.equal(parseChartRef('oci://r.example.com/c/x:1.2.3', { version: '1.2.3' }).type, 'oci');
  assert.throws(() => parseChartRef('oci://r.example.com/c/x:1.2.3', { version: '1.2.4' }), refError);
  assert.throws(() => parseChartRef(`oci://r.example.com/c/x@${DIGEST}`, { version: '1.2.4' }), refError);
  assert.throws(() => parseChartRef('oci://r.example.com/c/x', { version: '>>=1' }), refError);
});

test('oci locations: host is always the first component; + in a tag is written _', () => {
  assert.deepEqual(parseOciLocation(`oci://localhost:5000/a/b/memcached:1.2.3+build.1@${DIGEST}`), {
    registry: 'localhost:5000',
    repository: 'a/b/memcached',
    name: 'memcached',
    tag: '1.2.3_build.1',
    digest: DIGEST,
  });
  assert.deepEqual(parseOciLocation('oci://[::1]:5000/memcached'), { registry: '[::1]:5000', repository: 'memcached', name: 'memcached', tag: undefined, digest: undefined });
  // Without a dot or port the image grammar would read Docker Hub: refuse rather than guess.
  assert.throws(() => parseOciLocation('oci://myregistry/charts/x'), (err: unknown) => refError(err) && /registry host/.test(String(err)));
  assert.throws(() => parseOciLocation('oci://r.example.com'), refError);
  assert.throws(() => parseOciLocation('oci://r.example.com/Upper'), refError);
  assert.throws(() => parseOciLocation('oci://r.example.com/x@sha256:1234'), refError);
  assert.throws(() => parseOciLocation('https://r.example.com/x'), refError);
});

test('repository references: URL normalised, chart name checked', () => {
  assert.deepEqual(parseChartRef('memcached', { repo: 'https://charts.example.com/stable/index.yaml', version: '~7.0' }), {
    type: 'repo',
    url: 'https://charts.example.com/stable',
    chart: 'memcached',
    version: '~7.0',
  });
  assert.equal(normalizeChartRef({ type: 'repo', url: 'http://127.0.0.1:8080/', chart: 'x' }).type, 'repo');
  assert.deepEqual(normalizeChartRef({ type: 'repo', url: 'http://127.0.0.1:8080/', chart: 'x' }), { type: 'repo', url: 'http://127.0.0.1:8080', chart: 'x' });
  assert.deepEqual(normalizeChartRef({ type: 'repo', url: 'https://h.example/r/?token=1', chart: 'x' }), { type: 'repo', url: 'https://h.example/r?token=1', chart: 'x' });
  assert.throws(() => parseChartRef('bitnami/memcached', { repo: 'https://charts.example.com' }), refError);
  assert.throws(() => parseChartRef('memcached', { repo: 'ftp://charts.example.com' }), refError);
  assert.throws(() => parseChartRef('memcached', { repo: 'not a url' }), refError);
  // A repository URL alone is not a chart.
  assert.throws(() => parseChartRef('https://charts.example.com/index.yaml'), refError);
});

test('descriptions name the chart, where it is and the range', () => {
  assert.equal(describeChartRef({ type: 'repo', url: 'https://c.example', chart: 'memcached', version: '^7' }), 'memcached from https://c.example (version "^7")');
  assert.equal(describeChartRef({ type: 'oci', ref: 'oci://r.example/c/m' }), 'oci://r.example/c/m');
  assert.equal(describeChartRef({ type: 'dir', path: './m' }), './m');
});

test('a chart reference with credentials in it (OCI or repository, as a HelmOperator spec gives them) is refused, the password masked', () => {
  const cases: [() => unknown, RegExp][] = [
    [() => normalizeChartRef({ type: 'oci', ref: 'oci://u:s3cr3t@r.example/charts/memcached', version: '1.x' }), /registry auth file/],
    [() => normalizeChartRef({ type: 'oci', ref: 'oci://s3cr3t@r.example/charts/memcached' }), /registry auth file/],
    [() => normalizeChartRef({ type: 'repo', url: 'https://u:s3cr3t@charts.example/stable', chart: 'memcached' }), /publish the chart to an OCI registry/],
    [() => parseChartRef('memcached', { repo: 'https://s3cr3t@charts.example/stable' }), /repository credentials/],
  ];
  for (const [parse, where] of cases) {
    assert.throws(parse, (err: unknown) => {
      assert.ok(refError(err));
      const message = (err as Error).message;
      assert.match(message, /must not carry credentials \(.*\*\*\*@/);
      assert.match(message, where);
      assert.doesNotMatch(message, /s3cr3t/);
      assert.doesNotMatch((err as ChartSourceError).ref, /s3cr3t/);
      return true;
    });
  }
});
