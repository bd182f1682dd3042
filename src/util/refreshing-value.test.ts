import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RefreshingValue } from './refreshing-value.js';

/** A read the test answers when it likes. */
function reads(): { read: () => Promise<string>; pending: { resolve: (v: string) => void; reject: (e: Error) => void }[] } {
  const pending: { resolve: (v: string) => void; reject: (e: Error) => void }[] = [];
  return { pending, read: () => new Promise<string>((resolve, reject) => pending.push({ resolve, reject })) };
}

const settled = async <T>(p: Promise<T>): Promise<T | 'pending'> => Promise.race([p, new Promise<'pending'>((r) => setImmediate(() => r('pending')))]);

test('a fresh value is shared; past its TTL it is served while one read runs behind; the read replaces it', async () => {
  let now = 0;
  const value = new RefreshingValue<string>({ ttlMs: 30, staleMs: 300, now: () => now });
  const r = reads();
  const first = value.get(r.read);
  assert.equal(await settled(value.get(r.read)), 'pending', 'nothing read yet: callers wait');
  assert.equal(r.pending.length, 1, 'one read for both');
  r.pending[0]?.resolve('a');
  assert.equal(await first, 'a');
  now = 29;
  assert.equal(await value.get(r.read), 'a');
  assert.equal(r.pending.length, 1, 'fresh: not read again');
  now = 31;
  assert.equal(await settled(value.get(r.read)), 'a', 'past the TTL: the last value at once');
  assert.equal(await settled(value.get(r.read)), 'a');
  assert.equal(r.pending.length, 2, 'one read behind, however many callers');
  r.pending[1]?.resolve('b');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await value.get(r.read), 'b', 'the new value from then on');
  assert.equal(r.pending.length, 2, 'and it is fresh');
});

test('a failed read behind keeps the last value and is tried again a TTL later; a failed first read is not kept', async () => {
  let now = 0;
  const value = new RefreshingValue<string>({ ttlMs: 30, staleMs: 300, now: () => now });
  const r = reads();
  const first = value.get(r.read);
  r.pending[0]?.reject(new Error('away'));
  await assert.rejects(first, /away/);
  const second = value.get(r.read);
  assert.equal(r.pending.length, 2, 'the failure was not kept: read again');
  r.pending[1]?.resolve('a');
  assert.equal(await second, 'a');
  now = 40;
  assert.equal(await value.get(r.read), 'a');
  r.pending[2]?.reject(new Error('away'));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await value.get(r.read), 'a', 'kept after the read behind failed');
  assert.equal(r.pending.length, 3, 'not tried again at once');
  now = 71;
  assert.equal(await value.get(r.read), 'a');
  assert.equal(r.pending.length, 4, 'tried again a TTL later');
});

test('past the stale bound, after forget and on refresh, callers wait for the new read', async () => {
  let now = 0;
  const value = new RefreshingValue<string>({ ttlMs: 30, staleMs: 300, now: () => now });
  const r = reads();
  const first = value.get(r.read);
  r.pending[0]?.resolve('a');
  await first;
  now = 300;
  const past = value.get(r.read);
  assert.equal(await settled(past), 'pending', 'past the stale bound: waits');
  r.pending[1]?.resolve('b');
  assert.equal(await past, 'b');
  value.forget();
  const forgotten = value.get(r.read);
  assert.equal(await settled(forgotten), 'pending', 'forgotten: waits');
  r.pending[2]?.resolve('c');
  assert.equal(await forgotten, 'c');
  const refreshed = value.refresh(r.read);
  assert.equal(await settled(refreshed), 'pending', 'refresh: its caller waits for the read');
  assert.equal(await settled(value.get(r.read)), 'c', 'others are served the value meanwhile');
  r.pending[3]?.resolve('d');
  assert.equal(await refreshed, 'd');
  assert.equal(await value.get(r.read), 'd', 'the read replaced the value');
  // A refresh that fails leaves the value.
  const failed = value.refresh(r.read);
  r.pending[4]?.reject(new Error('away'));
  await assert.rejects(failed, /away/);
  assert.equal(await value.get(r.read), 'd', 'kept after a failed refresh');
  // A read behind that ends after the value was forgotten changes nothing.
  now = 400;
  assert.equal(await value.get(r.read), 'd');
  value.forget();
  r.pending[5]?.resolve('stale');
  await new Promise((resolve) => setImmediate(resolve));
  const after = value.get(r.read);
  r.pending[6]?.resolve('e');
  assert.equal(await after, 'e');
});

test('a read that throws at once fails its caller and leaves no read marked as running', async () => {
  let now = 0;
  const value = new RefreshingValue<string>({ ttlMs: 30, staleMs: 300, now: () => now });
  await assert.rejects(value.get(() => { throw new Error('thrown'); }), /thrown/);
  assert.equal(await value.get(() => Promise.resolve('a')), 'a');
  now = 40;
  assert.equal(await value.get(() => { throw new Error('thrown behind'); }), 'a', 'the last value; the read behind failed');
  now = 71;
  assert.equal(await value.get(() => Promise.resolve('b')), 'a', 'tried again a TTL later (not stuck as running)');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await value.get(() => Promise.resolve('c')), 'b');
});
