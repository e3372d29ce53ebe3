/**
 * One request per thread at a time. A request that finds the thread busy waits a short grace
 * ({@link BUSY_GRACE_MS}) for it to free before it is refused with 409: a client that closed a
 * stream and sent its next request at once may be read before the server saw the old connection
 * close (a pooled keep-alive connection carries the new request at once).
 */
import type { Timers } from "../internal/timers.js";
import { ChatApiError } from "./chat-api-error.js";

/** How long a request for a busy thread waits for it to free before its 409. */
export const BUSY_GRACE_MS = 1_000;

export class RequestSlot {
  readonly #threadId: string;
  readonly #timers: Timers;
  #busy = false;
  #waiters = new Set<() => void>();

  constructor(threadId: string, timers: Timers) {
    this.#threadId = threadId;
    this.#timers = timers;
  }

  /** A request holds the slot. */
  get busy(): boolean {
    return this.#busy;
  }

  /** Resolves `true` once the slot is free (at once when it is), `false` after {@link BUSY_GRACE_MS}. Never rejects. */
  whenFree(): Promise<boolean> {
    if (!this.#busy) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (free: boolean): void => {
        this.#timers.clearTimeout(timer);
        this.#waiters.delete(freed);
        resolve(free);
      };
      const freed = (): void => done(true);
      const timer = this.#timers.setTimeout(() => done(false), BUSY_GRACE_MS);
      this.#waiters.add(freed);
    });
  }

  /** Take the slot for one request; a 409 `thread_busy` when another holds it. */
  take(): void {
    if (this.#busy) throw ChatApiError.threadBusy(this.#threadId);
    this.#busy = true;
  }

  /** The request is over: the slot is free, and the requests waiting for it are told. */
  release(): void {
    this.#busy = false;
    for (const freed of [...this.#waiters]) freed();
  }
}
