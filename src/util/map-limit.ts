/**
 * `items.map(fn)` with at most `limit` calls of `fn` in flight at once: the answers in the
 * order of `items`. The first rejection rejects the whole (calls already started run out;
 * no new ones start). For independent requests to one API server, such as a release's
 * per-object reads, where one after another would wait out every round trip.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i] as T, i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}
