import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isTransient } from './errors.js';
import { BinnacleError } from '../util/errors.js';
import { crdEstablishment, waitCrdsEstablished } from './crd-established.js';
import type { KubeObject } from './types.js';

const crd = (conditions: Record<string, string>[]): KubeObject => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' }, status: { conditions } });

test('crdEstablishment: Established, pending, names refused', () => {
  assert.deepEqual(crdEstablishment(crd([{ type: 'Established', status: 'True' }])), { established: true, reason: 'Established' });
  assert.deepEqual(crdEstablishment(crd([])), { established: false, reason: 'not yet Established' });
  assert.deepEqual(crdEstablishment(crd([{ type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have not been accepted' }])), {
    established: false,
    reason: 'not Established: Installing: the initial names have not been accepted',
  });
  assert.equal(crdEstablishment(crd([{ type: 'NamesAccepted', status: 'False', reason: 'ListKindConflict', message: 'in use' }, { type: 'Established', status: 'True' }])).established, false);
});

test('waitCrdsEstablished: waits for the server; past the deadline a pending CRD is transient, refused names terminal', async () => {
  let reads = 0;
  await waitCrdsEstablished({ find: () => Promise.resolve(crd(++reads < 3 ? [] : [{ type: 'Established', status: 'True' }])) }, ['widgets.example.com'], { timeoutMs: 5_000, intervalMs: 1 });
  assert.equal(reads, 3);
  await assert.rejects(
    waitCrdsEstablished({ find: () => Promise.resolve(crd([{ type: 'Established', status: 'False', reason: 'Installing' }])) }, ['widgets.example.com'], { timeoutMs: 20, intervalMs: 5 }),
    (err: unknown) => err instanceof BinnacleError && err.code === 'CRD_NOT_ESTABLISHED' && isTransient(err) && /widgets\.example\.com is not Established after .*Installing/.test(err.message),
  );
  await assert.rejects(
    waitCrdsEstablished({ find: () => Promise.resolve(crd([{ type: 'NamesAccepted', status: 'False', reason: 'ListKindConflict' }])) }, ['widgets.example.com'], { timeoutMs: 20, intervalMs: 5 }),
    (err: unknown) => err instanceof BinnacleError && err.code === 'CRD_NAMES_NOT_ACCEPTED' && !isTransient(err),
  );
  await assert.rejects(waitCrdsEstablished({ find: () => Promise.resolve(undefined) }, ['gone.example.com'], { timeoutMs: 10, intervalMs: 5 }), /gone\.example\.com is not Established after .*: not found/);
});

test('waitCrdsEstablished nudges a CRD left Installing with its names accepted (the server establishes on an update only), again while it stays so, with its own field manager', async () => {
  const applied: { obj: KubeObject; fieldManager?: string }[] = [];
  const stuck = crd([{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have been accepted' }]);
  const client = {
    find: () => Promise.resolve(applied.length > 0 ? crd([{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'True' }]) : stuck),
    apply: (obj: KubeObject, opts?: { fieldManager?: string }) => {
      applied.push({ obj, fieldManager: opts?.fieldManager });
      return Promise.resolve(obj);
    },
  };
  await waitCrdsEstablished(client, ['widgets.example.com'], { timeoutMs: 5_000, intervalMs: 1, nudgeAfterMs: 0 });
  assert.equal(applied.length, 1);
  assert.equal(applied[0]?.fieldManager, 'binnacle-establish');
  assert.deepEqual(Object.keys(applied[0]?.obj ?? {}).sort(), ['apiVersion', 'kind', 'metadata'], 'only metadata: no field of the CRD anyone else applied');
  assert.ok(applied[0]?.obj.metadata.annotations?.['binnacle.dev/establishing-nudged'] !== undefined);

  // Names not yet accepted: nothing to nudge (the naming controller has it); still Installing: nudged again.
  const pending: KubeObject[] = [];
  await assert.rejects(
    waitCrdsEstablished({ find: () => Promise.resolve(crd([])), apply: (o: KubeObject) => (pending.push(o), Promise.resolve(o)) }, ['widgets.example.com'], { timeoutMs: 20, intervalMs: 2, nudgeAfterMs: 0 }),
    /not yet Established/,
  );
  assert.equal(pending.length, 0);
  const again: KubeObject[] = [];
  await assert.rejects(waitCrdsEstablished({ find: () => Promise.resolve(stuck), apply: (o: KubeObject) => (again.push(o), Promise.resolve(o)) }, ['widgets.example.com'], { timeoutMs: 30, intervalMs: 2, nudgeAfterMs: 0 }), /Installing/);
  assert.ok(again.length >= 2, `nudged ${again.length} times`);
});
