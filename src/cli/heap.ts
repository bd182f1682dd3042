/**
 * V8's collector, set for a command that runs once and exits. V8 sizes its heap for a browser
 * tab's throughput: after a full collection it lets the old generation grow to as much as four
 * times what survived, and it widens the young generation whenever a scavenge sees many
 * survivors. For a batch command that is memory held only by garbage, and how much depends on
 * timing (the same catalog render peaked anywhere from 165 to 255 MB). Go, which opm and kubectl
 * are written in, collects when the heap has doubled (GOGC=100); Binnacle asks V8 for the same.
 *
 * Both flags are read by V8 each time it sizes a space, so setting them once the process runs
 * takes effect (flags fixed at heap set-up, such as `--max-semi-space-size`, would not, and a
 * `node` option in the shebang does not work everywhere). heap.test.ts checks that they still
 * take effect on the Node it runs on.
 */
import { setFlagsFromString } from 'node:v8';

/**
 * Every command: a full collection once the old generation has doubled since the last one, unless
 * node runs with `--optimize-for-size` (the image's manager and `helm-operator run`,
 * src/self/image.ts and src/publish/helm-bundle/operator.ts). V8 then already grows the old
 * generation by at most 1.3 times what survived (its conservative mode), and
 * --heap-growing-percent replaces that cap rather than lowering it: with it set, every full
 * collection came when the heap was nearly twice what was live. Measured with bench/helm-operator.ts
 * on Node 24.22.3, `helm-operator run` at 10 loki-distributed CRs (one run each, --trace-gc and
 * process.memoryUsage sampled in the process): live after each full collection 20-23 MB either way;
 * the next one at 37-43 MB with the flag, at 25-32 MB without; V8's heap at its peak 44-50 → 31 MB,
 * the Node process's peak RSS 116-123 → 105 MiB; 25 full collections instead of 10, converge CPU
 * the same (3.0-3.3 s).
 */
export function collectLikeGo(): void {
  if (process.execArgv.includes('--optimize-for-size')) return;
  setFlagsFromString('--heap-growing-percent=100');
}

/**
 * For passes that keep little of what they read (a streamed render or validation): the young
 * generation stays at its starting size (Node 20's V8), or within a few pages of it where V8
 * 13 (Node 24) would otherwise widen it to 128 MB. Where much of what is read is kept (a model being
 * built), this promotes it early and costs time and memory, so it is for those passes only.
 */
export function keepYoungGenerationSmall(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

/** The young generation's largest capacity in MB (V8's default on Node 24: 32). */
const SCAVENGER_CAP_FLAG = '--scavenger-max-new-space-capacity-mb';

/**
 * A process run with `--optimize-for-size` (the image's manager and `helm-operator run`): a
 * young-generation collection after every few MB of new buffers, not every 64. Node reads
 * sockets and files into a fresh 64 KiB buffer each time, and a stream that hashes, unzips or
 * writes it on drops it at once; V8 counts those buffers apart from its heap and starts a
 * scavenge for their sake only when the young generation holds 64 MB of them (on Node 24's V8,
 * its capacity flag's 32 doubled): a download or a catalog read held up to 64 MB of dead buffers
 * on top of what it kept. V8 reads the capacity for that check each time, so lowering it in a
 * running process lowers the check; the main thread's young generation was sized at start-up
 * (measured: 2.5 to 2.8 MB under `--optimize-for-size`, 128 MB without, with or without it). A
 * worker started later is sized by it: under `--optimize-for-size` its young generation stays
 * as small either way (2.5 to 7 MB in a survivor-heavy loop), without it 128 MB became 10 to 13
 * (less memory, about 1.7 times the CPU), so plain commands (the Helm engine's worker among
 * them) are left as they were. Measured on Node 24.22.3 (diagnostics, not stored): a 65 MB blob
 * streamed over loopback into a hash, the process's peak RSS 98 to 101 MiB without, 65 to 67
 * MiB with (three runs each); bench/catalog-scale.ts in results/catalog-scale/. heap.test.ts
 * checks it on the Node it runs on. An operator's own launch flag wins; V8 before 13 (Node 20)
 * has no such flag.
 */
export function collectDeadBuffersSooner(): void {
  if (!process.execArgv.includes('--optimize-for-size')) return;
  if (process.execArgv.some((a) => /^--scavenger[-_]max[-_]new[-_]space[-_]capacity[-_]mb\b/.test(a))) return;
  if (Number(process.versions.v8.split('.')[0]) < 13) return;
  setFlagsFromString(`${SCAVENGER_CAP_FLAG}=1`);
}
