/**
 * The one duration grammar: Go's and kubectl's `1h30m`, `45s`, `250ms` (units h, m, s, ms,
 * decimals allowed), in milliseconds. CLI flags also take a bare number as seconds (what
 * Binnacle's `--timeout <seconds>` flags always took); Go durations in files (watches.yaml,
 * annotations, a HelmOperator's fields) do not.
 */

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** `value` in milliseconds, or undefined when it is not a duration. */
export function durationMs(value: string, opts: { bareSeconds?: boolean } = {}): number | undefined {
  const s = value.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return opts.bareSeconds === false ? undefined : Number(s) * 1000;
  let total = 0;
  let consumed = 0;
  for (const m of s.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
    consumed += m[0].length;
  }
  return consumed === s.length && consumed > 0 && Number.isFinite(total) ? total : undefined;
}

/** A Go duration (`1m30s`; no bare numbers) in milliseconds, or undefined. */
export function goDurationMs(value: string): number | undefined {
  return durationMs(value, { bareSeconds: false });
}

/** Milliseconds as Go prints a duration: `1m0s`, `1.5s`, `250ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return `${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}s`;
}
