/**
 * Watches caller signals for the table with ONE abort listener per distinct
 * signal, however many calls share it: a session-level signal reused by a
 * thousand concurrent calls carries one listener (no MaxListenersExceeded
 * warning), and zero once its last call has settled. The listener is added with
 * `addEventListener` and removed with `removeEventListener` (not left to
 * `{ once: true }`, which leaks on a long-lived signal that never fires).
 */
interface Watch<T> {
  readonly listener: () => void;
  readonly members: Set<T>;
}

export class CallerSignals<T> {
  #watches = new Map<AbortSignal, Watch<T>>();
  #onAbort: (member: T, signal: AbortSignal) => void;

  /** `onAbort` runs once per member still watched when its signal fires. */
  constructor(onAbort: (member: T, signal: AbortSignal) => void) {
    this.#onAbort = onAbort;
  }

  /** Distinct signals with a listener of ours. */
  get signalCount(): number {
    return this.#watches.size;
  }

  watch(signal: AbortSignal, member: T): void {
    let watch = this.#watches.get(signal);
    if (watch === undefined) {
      const members = new Set<T>();
      const listener = (): void => {
        for (const current of [...members]) if (members.has(current)) this.#onAbort(current, signal);
      };
      watch = { listener, members };
      this.#watches.set(signal, watch);
      signal.addEventListener("abort", listener);
    }
    watch.members.add(member);
  }

  /** Stop watching `member`; the signal's listener goes with its last member. */
  unwatch(signal: AbortSignal, member: T): void {
    const watch = this.#watches.get(signal);
    if (watch === undefined || !watch.members.delete(member) || watch.members.size > 0) return;
    this.#watches.delete(signal);
    signal.removeEventListener("abort", watch.listener);
  }
}
