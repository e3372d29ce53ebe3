/**
 * A push-to-pull queue: producers `push`, one consumer iterates with
 * `for await`. Ends with `end()` (iteration completes) or `fail(error)`
 * (iteration throws after the queued items). Items pushed before the consumer
 * starts are kept.
 */
export class AsyncEventQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #waiting: Array<{ resolve(result: IteratorResult<T>): void; reject(error: unknown): void }> = [];
  #ended = false;
  #error: unknown;
  #hasError = false;
  #iterating = false;

  push(item: T): void {
    if (this.#ended) return;
    const waiter = this.#waiting.shift();
    if (waiter) waiter.resolve({ value: item, done: false });
    else this.#items.push(item);
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#flush();
  }

  fail(error: unknown): void {
    if (this.#ended) return;
    this.#hasError = true;
    this.#error = error;
    this.end();
  }

  #flush(): void {
    for (const waiter of this.#waiting.splice(0)) {
      if (this.#hasError) {
        this.#hasError = false;
        waiter.reject(this.#error);
      } else waiter.resolve({ value: undefined as never, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.#iterating) throw new TypeError("a turn's events can be iterated once");
    this.#iterating = true;
    return {
      next: async () => {
        if (this.#items.length > 0) return { value: this.#items.shift() as T, done: false };
        if (this.#ended) {
          if (this.#hasError) {
            this.#hasError = false;
            throw this.#error;
          }
          return { value: undefined as never, done: true };
        }
        return new Promise<IteratorResult<T>>((resolve, reject) => this.#waiting.push({ resolve, reject }));
      },
      return: async () => {
        this.#items = [];
        return { value: undefined as never, done: true };
      },
    };
  }
}
