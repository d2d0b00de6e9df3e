// Per-key ordering and de-duplication of asynchronous work, in one process: the automation runs an installed
// app's SmartThings calls one lifecycle after another (an "open" must not overtake the "closed" before it), and
// refreshes an installed app's token at most once at a time (SmartThings rotates refresh tokens on use).

/** Runs the tasks of one key strictly one after another; different keys run independently. */
export class KeyedSerialQueue {
  private readonly tails = new Map<string, Promise<void>>();

  /** Resolves with the task's result once every earlier task of `key` and this one have finished. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    // The chain must not break on a failed task, and must not keep finished keys alive forever.
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Settles once every task queued so far has finished. */
  async idle(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }

  get size(): number {
    return this.tails.size;
  }
}

/** Concurrent callers with the same key share one in-flight promise. */
export class SingleFlight<T> {
  private readonly inFlight = new Map<string, Promise<T>>();

  run(key: string, task: () => Promise<T>): Promise<T> {
    const pending = this.inFlight.get(key);
    if (pending !== undefined) return pending;
    const started = task().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, started);
    return started;
  }
}
