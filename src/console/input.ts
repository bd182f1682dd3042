/** Reading and checking the page's JSON bodies: every problem is an `InputError` naming the field. */
import type { IncomingMessage } from 'node:http';
import semver from 'semver';
import { dns1123LabelProblem } from '../catalog/model.js';
import { MAX_NESTING, nestsDeeperThan } from '../util/nesting.js';
import { InputError } from './errors.js';

export const MAX_BODY_BYTES = 1024 * 1024;

export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(type)) throw new InputError('Content-Type', `expected application/json, got ${JSON.stringify(type)}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new InputError('body', `over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw new InputError('body', `not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError('body', 'expected a JSON object');
  if (nestsDeeperThan(value)) throw new InputError('body', `nests deeper than ${MAX_NESTING} levels`);
  return value as Record<string, unknown>;
}

export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new InputError(field, `expected a string, got ${typeof v}`);
  return v.trim() === '' ? undefined : v.trim();
}

export function requiredString(body: Record<string, unknown>, field: string): string {
  const v = optionalString(body, field);
  if (v === undefined) throw new InputError(field, 'required');
  return v;
}

/** A Kubernetes object name (DNS-1123 label): extension names, namespaces, ServiceAccounts. */
export function dnsLabel(body: Record<string, unknown>, field: string, fallback?: string): string {
  const v = optionalString(body, field) ?? fallback;
  if (v === undefined) throw new InputError(field, 'required');
  const problem = dns1123LabelProblem(v);
  if (problem !== undefined) throw new InputError(field, `${JSON.stringify(v)} ${problem}`);
  return v;
}

export function versionRange(body: Record<string, unknown>, field: string): string | undefined {
  const v = optionalString(body, field);
  if (v !== undefined && semver.validRange(v) === null) throw new InputError(field, `${JSON.stringify(v)} is not a version range (e.g. 1.2.3, >=1.0.0 <2.0.0, 1.x)`);
  return v;
}

export function channelList(body: Record<string, unknown>, field: string): string[] | undefined {
  const v = optionalString(body, field);
  if (v === undefined) return undefined;
  const list = v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const c of list) if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(c)) throw new InputError(field, `${JSON.stringify(c)} is not a channel name`);
  return list;
}

/** What the install form names, as plan and create read it: the package; the extension's name and namespace (both the package's by default); channels and version range when given. */
export interface InstallRequest {
  packageName: string;
  name: string;
  namespace: string;
  channels?: string[];
  version?: string;
}

export function installRequest(body: Record<string, unknown>): InstallRequest {
  const packageName = dnsLabel(body, 'package');
  const name = dnsLabel(body, 'name', packageName);
  const namespace = dnsLabel(body, 'namespace', packageName);
  const channels = channelList(body, 'channel');
  const version = versionRange(body, 'version');
  return { packageName, name, namespace, ...(channels === undefined ? {} : { channels }), ...(version === undefined ? {} : { version }) };
}

/** An exact version (semver), e.g. the one a rollback goes to. */
export function exactVersion(body: Record<string, unknown>, field: string): string | undefined {
  const v = optionalString(body, field);
  if (v !== undefined && semver.valid(v) === null) throw new InputError(field, `${JSON.stringify(v)} is not a version (e.g. 1.2.3)`);
  return v;
}
