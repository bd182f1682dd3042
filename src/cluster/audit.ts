/**
 * The API server's audit log, on when `cluster up` is asked for it (benches count the requests
 * an operator makes). Kept cheap: Metadata level, one event per request (at ResponseComplete;
 * a watch's event comes when it ends), and only for ServiceAccounts outside kube-system — the
 * control plane's own controllers and the admin user are not logged.
 */
import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
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
  // Rotation would move a bench's requests out of the file it reads (the default rotates at 100 MB,
  // which 1,000 CRs' reconciles pass), so the log is rotated only past 20 GiB.
  return [`--audit-policy-file=${policy}`, `--audit-log-path=${auditLogPath(layout)}`, '--audit-log-format=json', '--audit-log-maxsize=20480', '--audit-log-maxbackup=1'];
}

interface AuditEvent {
  user?: { username?: string };
  verb?: string;
  stage?: string;
}

/** Requests per user and verb in an audit log's text (one JSON event a line); `users` filters. */
export function countAuditRequests(text: string, users?: Set<string>, counts = new Map<string, Map<string, number>>()): Map<string, Map<string, number>> {
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

/**
 * countAuditRequests over the audit log file from byte `from` on, read a chunk at a time (a
 * thousand CRs' requests are hundreds of megabytes: more than one string may hold).
 */
export function countAuditRequestsInFile(file: string, from: number, users?: Set<string>, chunkBytes = 8 << 20): Map<string, Map<string, number>> {
  const counts = new Map<string, Map<string, number>>();
  const chunk = Buffer.alloc(chunkBytes);
  const fd = openSync(file, 'r');
  try {
    let at = from;
    let rest = '';
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, at);
      if (n === 0) break;
      at += n;
      // Whole lines only: the last, partial one waits for the next chunk (a multi-byte character may be split too).
      const text = rest + chunk.subarray(0, n).toString('latin1');
      const end = text.lastIndexOf('\n');
      countAuditRequests(Buffer.from(text.slice(0, end + 1), 'latin1').toString('utf8'), users, counts);
      rest = text.slice(end + 1);
    }
    countAuditRequests(Buffer.from(rest, 'latin1').toString('utf8'), users, counts);
  } finally {
    closeSync(fd);
  }
  return counts;
}
