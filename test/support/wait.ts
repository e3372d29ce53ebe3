/**
 * The one way tests wait. A condition is awaited with {@link until}, which polls through vitest's
 * `vi.waitFor` (under fake timers it advances them by itself); a test that means to let time pass —
 * to show that something does NOT happen within a while — says so with {@link letTimePass}.
 * Never a bare sleep, never a poller of its own.
 */
import { vi } from "vitest";

/**
 * Resolves with the first truthy value of `check`, polled every `intervalMs` by `vi.waitFor`;
 * rejects after `timeoutMs` with `what` in the message (or with what `check` threw last). `what` may be
 * a function, read when the message is made (to show the state at that moment).
 */
export function until<T>(
  check: () => T | undefined | null | false,
  what: string | (() => string),
  timeoutMs = 5_000,
  intervalMs = 5,
): Promise<T> {
  return vi.waitFor(
    () => {
      const value = check();
      if (!value) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === "function" ? what() : what}`);
      return value;
    },
    { timeout: timeoutMs, interval: intervalMs },
  );
}

/**
 * Lets `ms` of real time pass, on purpose: for a check that something does NOT arrive, or for a
 * test whose subject is time itself (a deadline, an idle timeout, a heartbeat). Waiting for a
 * condition is {@link until}'s job.
 */
export function letTimePass(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
