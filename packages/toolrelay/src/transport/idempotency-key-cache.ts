/**
 * A bounded, insertion-ordered set of `idempotency_key`s already delivered on
 * a cloud link. The relay delivers at least once (and fans frames out to both
 * status channels), so the same emission can arrive more than once; its key is
 * the same every time. A replay by `sync` carries a *new* key (the listener
 * mints `${type}:${event_seq}:${uuid}` per emission), so this cache only
 * collapses relay duplicates (docs/protocol.md#cloud-delivery-rules, docs/protocol.md#traps).
 *
 * Least-recently-seen keys are evicted first once `capacity` is reached.
 */
export interface IdempotencyKeyCacheOptions {
  /** Keys remembered at most. Default 1_000 (what Letta's own SDK keeps). */
  capacity?: number | undefined;
}

/** Default number of remembered idempotency keys. */
export const DEFAULT_IDEMPOTENCY_KEY_CAPACITY = 1_000;

export class IdempotencyKeyCache {
  readonly capacity: number;
  // A Map keeps insertion order; re-inserting a key moves it to the young end.
  #keys = new Map<string, true>();

  constructor(options: IdempotencyKeyCacheOptions = {}) {
    const capacity = options.capacity ?? DEFAULT_IDEMPOTENCY_KEY_CAPACITY;
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`idempotency key capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
  }

  /** Number of keys remembered now (never above `capacity`). */
  get size(): number {
    return this.#keys.size;
  }

  /**
   * Record `key` and report whether it had been seen before. A repeat counts as
   * a fresh use (it moves to the young end of the LRU order).
   */
  seen(key: string): boolean {
    const known = this.#keys.delete(key);
    this.#keys.set(key, true);
    if (!known && this.#keys.size > this.capacity) {
      const oldest = this.#keys.keys().next();
      if (!oldest.done) this.#keys.delete(oldest.value);
    }
    return known;
  }

  /** `true` when `key` is remembered (does not touch the LRU order). */
  has(key: string): boolean {
    return this.#keys.has(key);
  }

  clear(): void {
    this.#keys.clear();
  }
}
