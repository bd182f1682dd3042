/**
 * The API server's audit log, on when `cluster up` is asked for it (benches count the requests
 * an operator makes). Kept cheap: Metadata level, one event per request (at ResponseComplete;
 * a watch's event comes when it ends), and only for ServiceAccounts outside kube-system — the
 * control plane's own controllers and the admin user are not logged.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ClusterLayout } from './layout.js';

export const AUDIT_POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived', 'ResponseStarted'],
  rules: [
    { level: 'None', userGroups: ['system:serviceaccounts:kube-system'] },
    { level: 'Metadata', userGroups: ['system:serviceaccounts'] },
    { level: 'None' },
  ],
};

export function auditLogPath(layout: ClusterLayout): string {
  return join(layout.logs, 'audit.log');
}

/** Writes the policy and returns kube-apiserver's audit flags. */
export function auditArgs(layout: ClusterLayout): string[] {
  const policy = join(layout.root, 'audit-policy.yaml');
  writeFileSync(policy, stringify(AUDIT_POLICY));
  return [`--audit-policy-file=${policy}`, `--audit-log-path=${auditLogPath(layout)}`, '--audit-log-format=json', '--audit-log-maxbackup=1'];
}

interface AuditEvent {
  user?: { username?: string };
  verb?: string;
  stage?: string;
}

/** Requests per user and verb in an audit log's text (one JSON event a line); `users` filters. */
export function countAuditRequests(text: string, users?: Set<string>): Map<string, Map<string, number>> {
  const counts = new Map<string, Map<string, number>>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let e: AuditEvent;
    try {
      e = JSON.parse(line) as AuditEvent;
    } catch {
      continue; // a line being written as we read
    }
    const user = e.user?.username ?? '';
    if (users !== undefined && !users.has(user)) continue;
    if (e.stage !== undefined && e.stage !== 'ResponseComplete' && e.stage !== 'Panic') continue;
    const byVerb = counts.get(user) ?? new Map<string, number>();
    byVerb.set(e.verb ?? '', (byVerb.get(e.verb ?? '') ?? 0) + 1);
    counts.set(user, byVerb);
  }
  return counts;
}
