/**
 * Fields the `helm` CLI set on a release's objects, handed to Binnacle's field manager before
 * Binnacle applies them: a release `helm install`ed and adopted, one recorded by Helm 3 (client-
 * side, `Update` entries) or a `helm upgrade` run by hand on a Binnacle release (Helm 4, `Apply`
 * entries). Without this, a field the helm CLI set and Binnacle's next revision leaves out would
 * stay forever: server-side apply removes only what the applier itself held. Helm 4 does the same
 * for its own manager when a release moves from client- to server-side apply (pkg/kube's
 * upgradeClientSideFieldManager, client-go's csaupgrade): the entries are merged into one `Apply`
 * entry of the new manager, in a patch that holds only if the object did not change meanwhile.
 */
import { FIELD_MANAGER } from '../kube/client.js';
import { isConflict } from '../kube/errors.js';
import type { ObjectReader, ObjectWriter } from '../kube/ports.js';
import { managedFieldsOf, refOf, type KubeObject, type ManagedFieldsEntry as Entry } from '../kube/types.js';
import { isRecord } from '../util/object.js';

/** The field manager of the `helm` CLI (Helm 3 and 4). */
export const HELM_FIELD_MANAGER = 'helm';

/** An entry of the helm CLI on the object itself (a status subresource's is not Binnacle's to hold). */
function isHelms(e: Entry): boolean {
  return e.manager === HELM_FIELD_MANAGER && (e.subresource === undefined || e.subresource === '') && isRecord(e.fieldsV1);
}

/** Whether the helm CLI holds fields of `live`. */
export function heldByHelm(live: KubeObject): boolean {
  return managedFieldsOf(live).some(isHelms);
}

/** Two field sets (fieldsV1) as one: every field either holds. */
export function unionFields(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const mine = out[k];
    out[k] = isRecord(mine) && isRecord(v) ? unionFields(mine, v) : isRecord(mine) ? mine : v;
  }
  return out;
}

/**
 * `live`'s managedFields with every entry of the helm CLI merged into Binnacle's `Apply` entry
 * (made if there is none), or undefined when the helm CLI holds nothing.
 */
export function helmFieldsHandedOver(live: KubeObject, now: Date = new Date()): Entry[] | undefined {
  return fieldsHandedOver(live, isHelms, now);
}

/**
 * `live`'s managedFields with every entry `from` picks merged into Binnacle's `Apply` entry (made
 * if there is none), or undefined when it picks none: what those entries held, Binnacle's apply
 * now holds, so that an apply that leaves a field out removes it.
 */
export function fieldsHandedOver(live: KubeObject, from: (e: Entry) => boolean, now: Date = new Date()): Entry[] | undefined {
  const entries = managedFieldsOf(live);
  const helms = entries.filter((e) => from(e) && isRecord(e.fieldsV1));
  if (helms.length === 0) return undefined;
  const mine = entries.find((e) => e.manager === FIELD_MANAGER && e.operation === 'Apply' && (e.subresource === undefined || e.subresource === ''));
  let fields: Record<string, unknown> = isRecord(mine?.fieldsV1) ? mine.fieldsV1 : {};
  for (const h of helms) fields = unionFields(fields, h.fieldsV1 ?? {});
  const merged: Entry = { manager: FIELD_MANAGER, operation: 'Apply', apiVersion: mine?.apiVersion ?? helms[0]?.apiVersion ?? live.apiVersion, time: now.toISOString().replace(/\.\d{3}Z$/, 'Z'), fieldsType: 'FieldsV1', fieldsV1: fields };
  return [...entries.filter((e) => e !== mine && !helms.includes(e)), merged];
}

/**
 * Hands the helm CLI's fields of the live object to Binnacle's field manager (see the top of
 * this file). The patch names the resourceVersion it was made from: a write in between is a
 * conflict, and the object is read again and the hand-over made anew.
 */
export async function handOverHelmFields(client: Pick<ObjectReader, 'find'> & Pick<ObjectWriter, 'patch'>, obj: KubeObject, attempts = 3): Promise<boolean> {
  const ref = refOf(obj);
  for (let i = 1; ; i++) {
    const live = await client.find(ref);
    const managedFields = live === undefined ? undefined : helmFieldsHandedOver(live);
    if (live === undefined || managedFields === undefined) return false;
    try {
      await client.patch(ref, { metadata: { resourceVersion: live.metadata.resourceVersion, managedFields } });
      return true;
    } catch (err) {
      if (!isConflict(err) || i >= attempts) throw err;
    }
  }
}
