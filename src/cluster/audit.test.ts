import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AUDIT_POLICY, countAuditRequests, countAuditRequestsInFile } from './audit.js';

const ev = (user: string, verb: string, stage = 'ResponseComplete'): string => JSON.stringify({ kind: 'Event', stage, verb, user: { username: user } });

test('countAuditRequests counts one event per request, per user and verb, only for the users asked', () => {
  const log = [
    ev('system:serviceaccount:b:op', 'get'),
    ev('system:serviceaccount:b:op', 'get'),
    ev('system:serviceaccount:b:op', 'watch', 'ResponseStarted'), // the same request's earlier stage
    ev('system:serviceaccount:b:op', 'watch'),
    ev('system:serviceaccount:b:other', 'list'),
    '{"truncated', // a line being written
    '',
  ].join('\n');
  const counts = countAuditRequests(log, new Set(['system:serviceaccount:b:op']));
  assert.deepEqual([...counts.keys()], ['system:serviceaccount:b:op']);
  assert.deepEqual(Object.fromEntries(counts.get('system:serviceaccount:b:op') ?? []), { get: 2, watch: 1 });
  assert.equal(countAuditRequests(log).get('system:serviceaccount:b:other')?.get('list'), 1);
});

test('the audit policy logs ServiceAccounts at Metadata level and nothing of kube-system or other users', () => {
  const [kubeSystem, serviceAccounts, rest] = AUDIT_POLICY.rules;
  assert.deepEqual(kubeSystem, { level: 'None', userGroups: ['system:serviceaccounts:kube-system'] });
  assert.deepEqual(serviceAccounts, { level: 'Metadata', userGroups: ['system:serviceaccounts'] });
  assert.deepEqual(rest, { level: 'None' });
  assert.ok(AUDIT_POLICY.omitStages.includes('RequestReceived') && AUDIT_POLICY.omitStages.includes('ResponseStarted'));
});

test('countAuditRequestsInFile counts from a byte offset on, a chunk at a time, lines and characters split across chunks', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'audit-'));
  try {
    const file = path.join(dir, 'audit.log');
    const before = `${ev('system:serviceaccount:b:op', 'get')}\n`;
    // A user name with multi-byte characters: a 7-byte chunk splits them and every line.
    const lines = [ev('system:serviceaccount:b:öp', 'get'), ev('system:serviceaccount:b:öp', 'list'), ev('system:serviceaccount:b:öp', 'get'), ev('system:serviceaccount:b:op', 'get')];
    writeFileSync(file, before + lines.join('\n'));
    for (const chunk of [7, 64, 8 << 20]) {
      const counts = countAuditRequestsInFile(file, Buffer.byteLength(before), undefined, chunk);
      assert.deepEqual(Object.fromEntries(counts.get('system:serviceaccount:b:öp') ?? []), { get: 2, list: 1 }, `chunk ${chunk}`);
      // The event before the offset is not counted; the last line (no newline after it) is.
      assert.deepEqual(Object.fromEntries(counts.get('system:serviceaccount:b:op') ?? []), { get: 1 }, `chunk ${chunk}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
