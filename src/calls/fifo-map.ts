/**
 * A string-keyed Map that also finds its OLDEST entry in O(1).
 *
 * Why not a plain Map: V8 keeps a deleted Map slot until the table's next
 * rehash, and every iterator walks over such slots. A Map used as a queue
 * (delete the oldest, add the newest) piles its deleted slots up at the front,
 * so `map.keys().next()` costs O(deleted slots) — up to the table's capacity.
 * For the replay cache's 65,536 tombstones that was ~45 µs on every tool call
 * once the tombstones were full. Here a side queue of insertion records answers
 * "oldest" instead; records of deleted or re-inserted keys are skipped once
 * (each record is passed over at most once), and the queue is compacted.
 */
export class FifoMap<V> {
  #map = new Map<string, { value: V; seq: number }>();
  #queue: Array<{ key: string; seq: number }> = [];
  #head = 0;
  #seq = 0;

  get size(): number {
    return this.#map.size;
  }

  get(key: string): V | undefined {
    return this.#map.get(key)?.value;
  }

  has(key: string): boolean {
    return this.#map.has(key);
  }

  /** Insert or replace `key`; it becomes the newest entry either way. */
  set(key: string, value: V): void {
    const seq = ++this.#seq;
    this.#map.delete(key);
    this.#map.set(key, { value, seq });
    this.#queue.push({ key, seq });
    this.#compact();
  }

  delete(key: string): boolean {
    return this.#map.delete(key);
  }

  /** The oldest entry, or `undefined` when empty. Amortized O(1). */
  oldest(): [key: string, value: V] | undefined {
    while (this.#head < this.#queue.length) {
      const record = this.#queue[this.#head]!;
      const live = this.#map.get(record.key);
      if (live !== undefined && live.seq === record.seq) return [record.key, live.value];
      this.#head++;
    }
    return undefined;
  }

  /** Values, oldest first. */
  *values(): IterableIterator<V> {
    for (const entry of this.#map.values()) yield entry.value;
  }

  /** Entries, oldest first. */
  *entries(): IterableIterator<[string, V]> {
    for (const [key, entry] of this.#map) yield [key, entry.value];
  }

  clear(): void {
    this.#map.clear();
    this.#queue = [];
    this.#head = 0;
  }

  /** Drop passed-over records; rebuild from the map when stale records dominate. */
  #compact(): void {
    if (this.#head > 1_024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    if (this.#queue.length - this.#head > 2 * this.#map.size + 1_024) {
      this.#queue = [...this.#map].map(([key, entry]) => ({ key, seq: entry.seq }));
      this.#head = 0;
    }
  }
}
