/**
 * Injectable timers. Everything in toolrelay that waits goes through a
 * {@link Timers} so that tests with fake timers are exact. The system timers
 * look up `globalThis.setTimeout` at call time, so vitest's fake timers (which
 * patch the global) apply to them too.
 */
export type TimerHandle = { readonly __timer: unique symbol } | object | number;

/** A clock: what toolrelay uses wherever time matters (pass fake ones in tests). */
export interface Timers {
  /** Call `callback` once after `delayMs`; the handle cancels it. */
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  /** Cancel a timer (a handle that already fired or was cleared is ignored). */
  clearTimeout(handle: TimerHandle): void;
  /** Milliseconds, monotonic enough for durations (Date.now under fake timers). */
  now(): number;
}

export const systemTimers: Timers = {
  setTimeout(callback, delayMs) {
    return globalThis.setTimeout(callback, delayMs) as unknown as TimerHandle;
  },
  clearTimeout(handle) {
    globalThis.clearTimeout(handle as Parameters<typeof globalThis.clearTimeout>[0]);
  },
  now() {
    return Date.now();
  },
};

/** Ask Node not to keep the process alive for this timer (no-op elsewhere). */
export function unrefTimer(handle: TimerHandle): void {
  const maybe = handle as { unref?: (() => void) | undefined };
  if (typeof maybe.unref === "function") maybe.unref();
}
