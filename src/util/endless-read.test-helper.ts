/**
 * For tests of code that must refuse to read without end (a path to /dev/zero, a FIFO nobody
 * writes): a read like that cannot be cancelled, so when it happens anyway the test process has
 * to stop itself, before it takes the machine's memory or waits forever.
 */

/** Growth of the process's buffers and memory past which a read is taken to be without end. */
const GROWTH_BYTES = 64 * 1024 * 1024;

/**
 * Runs `fn`. When, before it settles, the process's memory grows by more than 64 MiB or `ms`
 * pass, the process says so on stderr and exits with 1 (the runner reports this file as failed).
 * A file that uses it runs in a process of its own: it says `// test process: its own` on a line
 * of its own (hack/test.sh runs the other unit files in one process, which this would end).
 * Not for a read that blocks in a system call (the open of a FIFO nobody writes): exit waits for
 * that thread; the test must unblock it itself.
 */
export async function withoutEndlessRead<T>(what: string, fn: () => Promise<T>, ms = 5_000): Promise<T> {
  const mem = (): number => process.memoryUsage().arrayBuffers + process.memoryUsage().rss;
  const start = mem();
  const started = Date.now();
  const timer = setInterval(() => {
    const grown = mem() - start;
    const elapsed = Date.now() - started;
    if (grown < GROWTH_BYTES && elapsed < ms) return;
    process.stderr.write(`${what}: still running after ${elapsed} ms, memory grown by ${Math.round(grown / 2 ** 20)} MiB: reading without end; stopping the process\n`);
    process.exit(1);
  }, 20);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
