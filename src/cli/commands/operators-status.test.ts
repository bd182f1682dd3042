/**
 * `binnacle status NAME` says an extension is an OLM v1 object's twin only when it is one
 * (api/olmv1/twin.ts: the label and a controller reference naming one UID); a label alone, which
 * whoever may create binnacle.dev ClusterExtensions can write, gets no such line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LABEL_OLMV1_TWIN_OF, OLMV1_API_VERSION } from '../../api/olmv1/types.js';
import { API_VERSION, type ClusterExtension } from '../../api/types.js';
import { servedAsLine } from './operators.js';

const UID = '11111111-1111-4111-8111-111111111111';

function ce(labelled: boolean, owned: boolean): ClusterExtension {
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: {
      name: 'op',
      ...(labelled ? { labels: { [LABEL_OLMV1_TWIN_OF]: UID } } : {}),
      ...(owned ? { ownerReferences: [{ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: 'op', uid: UID, controller: true }] } : {}),
    },
    spec: { namespace: 'ops', serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'op' } } },
  };
}

test('status names the OLM v1 object only for a twin: label and controller reference both', () => {
  assert.match(servedAsLine(ce(true, true)), /^API: +olm\.operatorframework\.io\/v1 ClusterExtension op \(Binnacle reconciles it as this binnacle\.dev twin\)\n$/);
  assert.equal(servedAsLine(ce(true, false)), '', 'a label alone');
  assert.equal(servedAsLine(ce(false, true)), '', 'an owner alone');
  assert.equal(servedAsLine(ce(false, false)), '');
});
