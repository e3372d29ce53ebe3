/** Waiting helpers with deadlines for the reliability suites. */

/** Poll `check` every 5 ms until it returns a truthy value; rejects after `timeoutMs` (× TIME_SCALE), naming `what`. */
export function until<T>(check: () => T | undefined | null | false, what: string, timeoutMs = 5_000): Promise<T> {
  timeoutMs = scaled(timeoutMs);
  const deadline = Date.now() + timeoutMs;
  return new Promise<T>((resolve, reject) => {
    const poll = () => {
      let value: T | undefined | null | false;
      try {
        value = check();
      } catch (error) {
        return reject(error);
      }
      if (value) return resolve(value);
      if (Date.now() > deadline) return reject(new Error(`until: ${what} — not within ${timeoutMs} ms`));
      setTimeout(poll, 5);
    };
    poll();
  });
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Sleep `ms`, or less when `signal` aborts (never rejects). */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

/**
 * `promise`, or a rejection naming `what` after `timeoutMs` (× TIME_SCALE). The deadline's own
 * promise is always settled and its timer cleared (no async leak either way).
 */
export async function within<T>(promise: Promise<T>, what: string, timeoutMs: number): Promise<T> {
  timeoutMs = scaled(timeoutMs);
  const timedOut = Symbol("timed out");
  let timer: NodeJS.Timeout | undefined;
  let release!: () => void;
  const deadline = new Promise<typeof timedOut | undefined>((resolve) => {
    release = () => resolve(undefined);
    timer = setTimeout(() => resolve(timedOut), timeoutMs);
  });
  try {
    const winner = await Promise.race([promise.then((value) => ({ value })), deadline]);
    if (winner === timedOut || winner === undefined) throw new Error(`within: ${what} — not within ${timeoutMs} ms`);
    return winner.value;
  } finally {
    clearTimeout(timer);
    release();
  }
}

/**
 * Deadlines and time budgets of the reliability suites are multiplied by this
 * (env RELIABILITY_TIME_SCALE, default 1). scripts/check-async-leaks.mjs sets
 * it, because vitest's async-leak detection records a stack trace for every
 * async resource and slows the test process down several times. The figures in
 * docs/reliability.md come from runs at scale 1.
 */
export const TIME_SCALE = Math.max(1, Number(process.env.RELIABILITY_TIME_SCALE ?? 1) || 1);

/** `ms` × {@link TIME_SCALE}. */
export function scaled(ms: number): number {
  return ms * TIME_SCALE;
}
