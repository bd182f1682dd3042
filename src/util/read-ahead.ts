/**
 * Work on a list in order, with the next few items already started: their file reads run in
 * libuv's thread pool while this thread parses the item before. For loaders that read a file
 * and then parse it synchronously, one after another, the reads otherwise leave the thread idle
 * (a fifth of a whole-corpus catalog render).
 */

type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Yields `start(item)`'s result for each item, in the items' order, with up to `ahead` items
 * started before their turn. A failure is thrown at its item's turn, as a plain loop would throw
 * it; items started ahead of it are still awaited quietly, so no rejection goes unhandled.
 */
export async function* readAhead<T, R>(items: readonly T[], ahead: number, start: (item: T) => Promise<R>): AsyncGenerator<R> {
  const started: (Promise<Settled<R>> | undefined)[] = [];
  const settle = (item: T): Promise<Settled<R>> =>
    start(item).then(
      (value): Settled<R> => ({ ok: true, value }),
      (error: unknown): Settled<R> => ({ ok: false, error }),
    );
  let next = 0;
  try {
    for (let i = 0; i < items.length; i++) {
      while (next < items.length && next <= i + ahead) started.push(settle(items[next++] as T));
      const r = await (started[i] as Promise<Settled<R>>);
      started[i] = undefined; // not held once taken
      if (!r.ok) throw r.error;
      yield r.value;
    }
  } finally {
    // Stopped early (a failure, or the consumer left): what was started ahead finishes unseen.
    await Promise.all(started.filter((p): p is Promise<Settled<R>> => p !== undefined));
  }
}
