import type { Timers } from "../internal/timers.js";

/** Quiet after the last tool call request before a closing session lets its socket go, in ms. */
export const CLOSE_DRAIN_QUIET_MS = 150;
/** The longest a closing session keeps its socket open for requests still on their way, in ms. */
export const CLOSE_DRAIN_MAX_MS = 1_000;

/**
 * The last moments of a closing session's link. The runtime sends the next tool call of a model
 * response a few milliseconds after the previous one was answered, so a session closed during a
 * burst has requests on their way that its socket must still answer (cancelled: the call table is
 * closed) — once its close frame went out it could not. So the socket stays open until no request
 * has come for {@link CLOSE_DRAIN_QUIET_MS}, at most {@link CLOSE_DRAIN_MAX_MS}.
 */
export class CloseDrain {
  #timers: Timers;
  #lastRequestAt: number | undefined;

  constructor(timers: Timers) {
    this.#timers = timers;
  }

  /** A tool call request arrived (answered or not). */
  requestArrived(): void {
    this.#lastRequestAt = this.#timers.now();
  }

  /** Resolves once requests have been quiet for the quiet time (from now at the least), or at the longest wait. */
  async quiet(isOpen: () => boolean): Promise<void> {
    const started = this.#timers.now();
    const deadline = started + CLOSE_DRAIN_MAX_MS;
    for (;;) {
      const quietSince = Math.max(started, this.#lastRequestAt ?? started);
      const due = Math.min(quietSince + CLOSE_DRAIN_QUIET_MS, deadline);
      const wait = due - this.#timers.now();
      if (wait <= 0 || !isOpen()) return;
      await new Promise<void>((resolve) => this.#timers.setTimeout(resolve, wait));
    }
  }
}
