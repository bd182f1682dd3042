/**
 * The requests of the one fake cluster (fake-cluster.test-helper.ts): what it logs of each, the
 * faults a test arms against them, RBAC's refusal in the API server's words, and the access
 * reviews it answers.
 */
import { KubeApiError } from './errors.js';
import { parseApiVersion } from './types.js';

/** The process was killed at this request (a fault the model-based tests inject): nothing after it runs. */
export class Crash extends Error {
  constructor(where: string) {
    super(`crash at ${where}`);
    this.name = 'Crash';
  }
}

/** `discover`: a lookup of the resource serving a kind (never logged: the real client caches discovery; a fault can still fail it). */
export type FakeVerb = 'get' | 'list' | 'create' | 'update' | 'patch' | 'apply' | 'delete' | 'status' | 'dry-run' | 'watch' | 'discover';
export const WRITE_VERBS: ReadonlySet<FakeVerb> = new Set(['create', 'update', 'patch', 'apply', 'delete', 'status']);

/** One request as the fake saw it. */
export interface FakeRequest {
  verb: FakeVerb;
  apiVersion: string;
  kind: string;
  /** The resource (plural) the kind is served as, as RBAC names it (a guess from the kind when none serves it). */
  resource: string;
  namespace: string;
  name: string;
  /** Who sent it: the impersonated user, or `admin`. */
  identity: string;
  /** The groups impersonated with the user, when any were. */
  groups?: string[];
  /** A delete's propagation policy, when it names one. */
  propagation?: string;
  /** The resourceVersion a watch starts from, when it names one. */
  resourceVersion?: string;
  /** The label selector of a list or watch, when it names one. */
  labelSelector?: string;
}

/** The RBAC verb a request is checked as (server-side apply and a dry run are patches; a status write patches `<resource>/status`). */
function rbacOf(req: FakeRequest): { verb: string; resource: string } {
  if (req.verb === 'apply' || req.verb === 'dry-run') return { verb: 'patch', resource: req.resource };
  if (req.verb === 'status') return { verb: 'patch', resource: `${req.resource}/status` };
  return { verb: req.verb, resource: req.resource };
}

/** The API server's words for a request RBAC refused (what `kubectl` prints, and what the console reads the verb and resource from). */
export function forbiddenMessage(req: FakeRequest): string {
  const { group } = parseApiVersion(req.apiVersion);
  const { verb, resource } = rbacOf(req);
  const qualified = group === '' ? req.resource : `${req.resource}.${group}`;
  const where = req.namespace === '' ? 'at the cluster scope' : `in the namespace "${req.namespace}"`;
  return `${qualified}${req.name === '' ? '' : ` "${req.name}"`} is forbidden: User "${req.identity}" cannot ${verb} resource "${resource}" in API group "${group}" ${where}`;
}

export interface FaultRule {
  verb?: FakeVerb | readonly FakeVerb[];
  kind?: string;
  namespace?: string;
  name?: string | RegExp;
  identity?: string;
  /** Any other test of the request (the n-th write since armed, say). */
  match?: (req: FakeRequest) => boolean;
  /** `before`: the request fails, nothing changes (default). `after`: the write lands, then the caller sees the error. */
  when?: 'before' | 'after';
  error: (req: FakeRequest) => Error;
  /** How many matching requests fail (default 1); Infinity for every one. */
  times?: number;
}

export const faults = {
  conflict: (): Error => new KubeApiError(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again'),
  tooManyRequests: (): Error => new KubeApiError(429, 'TooManyRequests', 'the server has received too many requests and has asked us to try again later'),
  unavailable: (): Error => new KubeApiError(503, 'ServiceUnavailable', 'the server is currently unable to handle the request'),
  forbidden: (req: FakeRequest): Error => new KubeApiError(403, 'Forbidden', forbiddenMessage(req)),
  crash: (req: FakeRequest): Error => new Crash(`${req.verb} ${req.kind} ${req.namespace}/${req.name}`),
};

/** What a SubjectAccessReview or SelfSubjectAccessReview asks: RBAC's attributes (`*` matches anything), for a user and their groups. */
export interface AccessReview {
  user: string;
  groups: string[];
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** A non-resource URL (`/metrics`); empty for a resource. */
  path: string;
}

/** The kinds the API server answers on create and never keeps. */
export const REVIEW_KINDS = new Set(['SubjectAccessReview', 'SelfSubjectAccessReview', 'TokenReview', 'SelfSubjectReview']);

export function matches(rule: FaultRule, req: FakeRequest): boolean {
  if (rule.verb !== undefined && !(typeof rule.verb === 'string' ? rule.verb === req.verb : rule.verb.includes(req.verb))) return false;
  if (rule.kind !== undefined && rule.kind !== req.kind) return false;
  if (rule.namespace !== undefined && rule.namespace !== req.namespace) return false;
  if (rule.identity !== undefined && rule.identity !== req.identity) return false;
  if (rule.name !== undefined && !(typeof rule.name === 'string' ? rule.name === req.name : rule.name.test(req.name))) return false;
  return rule.match === undefined || rule.match(req);
}
