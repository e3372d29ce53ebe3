/**
 * One queue per key: tasks of one key run one after the other, in the order they were given, even
 * when the caller does not wait (a `start` and its `settle` given at once); tasks of different keys
 * run side by side. A key's queue is forgotten as soon as it is empty.
 */
export class PerKeyQueue {
  /** The last task of each busy key; never rejects. */
  readonly #tails = new Map<string, Promise<void>>();

  /** Run `task` after every task given before it for `key`; its promise is `task`'s (a failure does not stop the queue). */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key);
    const result = previous === undefined ? task() : previous.then(task);
    const tail = result.then(ignore, ignore);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Keys with a task running or waiting. */
  get size(): number {
    return this.#tails.size;
  }

  /** Resolves once every task given so far has finished (tasks given meanwhile included). */
  async idle(): Promise<void> {
    while (this.#tails.size > 0) await Promise.all([...this.#tails.values()]);
  }
}

function ignore(): void {}
