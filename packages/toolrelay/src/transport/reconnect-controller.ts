import type { Timers, TimerHandle } from "../internal/timers.js";
import type { Backoff } from "./backoff.js";

export interface ReconnectControllerOptions {
  /** Delay for retry number `attempt` (0-based). */
  backoff: Backoff;
  timers: Timers;
  /** One connection attempt: resolves when the link is open again, rejects when it failed. */
  attempt: () => Promise<void>;
  /** Called once the link is open again. */
  onReconnected: () => void;
  /** Called after every failed attempt (for logging / events). */
  onAttemptFailed?: ((error: unknown, attempt: number) => void) | undefined;
  /**
   * Stop retrying after this many failed attempts and call `onGiveUp`.
   * Default: never give up (`Infinity`).
   */
  maxAttempts?: number | undefined;
  onGiveUp?: ((error: unknown) => void) | undefined;
  /** Errors for which retrying is pointless (bad credentials, say). Default: none. */
  isFatal?: ((error: unknown) => boolean) | undefined;
}

/**
 * A single-flight reconnect loop: `schedule()` while a reconnect is already
 * scheduled or running does nothing. Every deferred step checks `stopped`
 * before touching anything, so `stop()` is final.
 */
export class ReconnectController {
  #options: ReconnectControllerOptions;
  #timer: TimerHandle | undefined;
  #running = false;
  #stopped = false;
  #attempt = 0;

  constructor(options: ReconnectControllerOptions) {
    this.#options = options;
  }

  /** `true` while a retry is scheduled or an attempt is in flight. */
  get active(): boolean {
    return this.#running;
  }

  schedule(): void {
    if (this.#stopped || this.#running) return;
    this.#running = true;
    this.#attempt = 0;
    this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    this.#running = false;
    if (this.#timer !== undefined) this.#options.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    const delay = this.#options.backoff(this.#attempt);
    this.#timer = this.#options.timers.setTimeout(() => {
      this.#timer = undefined;
      void this.#tryOnce();
    }, delay);
  }

  async #tryOnce(): Promise<void> {
    if (this.#stopped) return;
    const attempt = this.#attempt;
    try {
      await this.#options.attempt();
    } catch (error) {
      if (this.#stopped) return;
      this.#options.onAttemptFailed?.(error, attempt);
      const maxAttempts = this.#options.maxAttempts ?? Number.POSITIVE_INFINITY;
      if (this.#options.isFatal?.(error) || attempt + 1 >= maxAttempts) {
        this.#running = false;
        this.#options.onGiveUp?.(error);
        return;
      }
      this.#attempt = attempt + 1;
      this.#arm();
      return;
    }
    if (this.#stopped) return;
    this.#running = false;
    this.#options.onReconnected();
  }
}
