/** Waiting helpers with deadlines for the reliability suites (built on test/support/wait.ts). */
import { until as sharedUntil } from "../../support/wait.js";

/** {@link sharedUntil} with the deadline × TIME_SCALE. */
export function until<T>(check: () => T | undefined | null | false, what: string | (() => string), timeoutMs = 5_000): Promise<T> {
  return sharedUntil(check, what, scaled(timeoutMs));
}

export { letTimePass } from "../../support/wait.js";

/** A tool's simulated work: `ms` of real time on purpose, or less when `signal` aborts (never rejects). */
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
