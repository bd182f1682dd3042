/**
 * Work on one key at a time within this process: a call runs once every earlier call with the
 * same key has settled (resolved or rejected). Keys are forgotten once their last call settles.
 */
export class KeyedSerial {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const result = before.then(fn, fn);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with a call queued or running. */
  get size(): number {
    return this.tails.size;
  }
}
