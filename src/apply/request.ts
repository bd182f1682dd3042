/** Checks an ApplyRequest at the boundary and reports every problem at once. */
import { isKubeObject } from '../kube/types.js';
import { ValidationError, ValidationResult } from '../util/errors.js';
import { identityOf } from './phases.js';
import type { ApplyRequest } from './types.js';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Checks a request; its objects are checked as they come (a renderer's output is not trusted to be objects at all). */
export function validateRequest(req: Omit<ApplyRequest, 'objects'> & { objects: readonly unknown[] }): void {
  const result = new ValidationResult(`apply request for release ${req.release.namespace}/${req.release.name}`);
  // Helm limits release names to 53 characters so that `sh.helm.release.v1.<name>.vN` fits.
  if (req.release.name.length === 0 || req.release.name.length > 53 || !DNS1123_SUBDOMAIN.test(req.release.name)) {
    result.error('apply.release-name', `release name ${JSON.stringify(req.release.name)} must be a DNS-1123 name of at most 53 characters`, { field: 'release.name' });
  }
  if (req.release.namespace === '' || !DNS1123_SUBDOMAIN.test(req.release.namespace)) {
    result.error('apply.release-namespace', `release namespace ${JSON.stringify(req.release.namespace)} is not a valid namespace name`, { field: 'release.namespace' });
  }
  for (const [field, value] of [['owner.kind', req.owner.kind], ['owner.name', req.owner.name]] as const) {
    if (value === '' || value.length > 63 || !LABEL_VALUE.test(value)) {
      result.error('apply.owner', `${JSON.stringify(value)} cannot be a label value (at most 63 characters: letters, digits, '-', '_', '.')`, { field });
    }
  }
  const seen = new Set<string>();
  req.objects.forEach((o: unknown, i) => {
    const field = `objects[${i}]`;
    if (!isKubeObject(o)) {
      result.error('apply.object', 'not a Kubernetes object: needs apiVersion, kind and metadata', { field });
      return;
    }
    if (typeof o.metadata.name !== 'string' || o.metadata.name === '') {
      result.error('apply.object-name', `${o.kind} has no metadata.name (generateName cannot be applied idempotently)`, { field: `${field}.metadata.name` });
      return;
    }
    const id = identityOf(o);
    if (seen.has(id)) result.error('apply.duplicate', `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name} appears twice`, { field });
    seen.add(id);
  });
  if (!result.ok) throw new ValidationError(result);
}
