import type { TimerHandle, Timers } from "../internal/timers.js";

/**
 * Debounces the recovery `sync` a cloud link sends after a lost event.
 *
 * The frame is `{"type":"sync","runtime":…,"recover_approvals":false,
 * "force_device_status":true}` on the control socket, with no `request_id`
 * (so the runtime sends no `sync_response`; the state arrives as ordinary
 * snapshot frames). Behind a relay that delivers one runtime's frames only,
 * `event_seq` holes are normal and never fill, so requests are collapsed and
 * backed off:
 * - requests within `debounceMs` of the first one become one sync;
 * - two syncs are at least the current interval apart: `minIntervalMs` after
 *   the first, then doubled by every further sync this trigger sends, up to
 *   `maxIntervalMs` (5, 10, 20, 40, 60, 60 … s by default);
 *   `resetBackoff()` (a new turn, a new connection) goes back to `minIntervalMs`;
 * - a sync the session sends itself (after a reconnect) counts too
 *   (`markSent`), and cancels a pending one.
 */
export interface CloudSyncTriggerOptions {
  /** Collect requests for this long before sending, in ms. Default 250. */
  debounceMs?: number | undefined;
  /** Least time between two syncs at first, in ms. Default 5_000. */
  minIntervalMs?: number | undefined;
  /** Cap of the backed-off interval, in ms. Default 60_000. */
  maxIntervalMs?: number | undefined;
  timers: Timers;
  /** Write the sync frame; return `false` when it could not be written (link down: dropped, the reconnect re-syncs). */
  send: () => boolean;
}

export const DEFAULT_SYNC_DEBOUNCE_MS = 250;
export const DEFAULT_SYNC_MIN_INTERVAL_MS = 5_000;
export const DEFAULT_SYNC_MAX_INTERVAL_MS = 60_000;

export class CloudSyncTrigger {
  #options: CloudSyncTriggerOptions;
  #debounceMs: number;
  #minIntervalMs: number;
  #maxIntervalMs: number;
  #intervalMs: number;
  #sentSinceReset = 0;
  #timer: TimerHandle | undefined;
  #lastSentAt: number | undefined;
  #sent = 0;
  #stopped = false;

  constructor(options: CloudSyncTriggerOptions) {
    this.#options = options;
    this.#debounceMs = Math.max(0, options.debounceMs ?? DEFAULT_SYNC_DEBOUNCE_MS);
    this.#minIntervalMs = Math.max(0, options.minIntervalMs ?? DEFAULT_SYNC_MIN_INTERVAL_MS);
    this.#maxIntervalMs = Math.max(this.#minIntervalMs, options.maxIntervalMs ?? DEFAULT_SYNC_MAX_INTERVAL_MS);
    this.#intervalMs = this.#minIntervalMs;
  }

  /** The least time to the next sync after the last one, in ms (backed off). */
  get intervalMs(): number {
    return this.#intervalMs;
  }

  /** Syncs written by this trigger. */
  get sent(): number {
    return this.#sent;
  }

  /** `true` while a sync is scheduled. */
  get pending(): boolean {
    return this.#timer !== undefined;
  }

  /** Ask for a sync; coalesced with any already scheduled. */
  request(): void {
    if (this.#stopped || this.#timer !== undefined) return;
    const now = this.#options.timers.now();
    let dueAt = now + this.#debounceMs;
    if (this.#lastSentAt !== undefined) dueAt = Math.max(dueAt, this.#lastSentAt + this.#intervalMs);
    this.#timer = this.#options.timers.setTimeout(() => {
      this.#timer = undefined;
      if (this.#stopped) return;
      if (this.#options.send()) {
        this.#sent++;
        this.#lastSentAt = this.#options.timers.now();
        this.#sentSinceReset++;
        this.#intervalMs = Math.min(this.#maxIntervalMs, this.#minIntervalMs * 2 ** (this.#sentSinceReset - 1));
      }
    }, dueAt - now);
  }

  /** A sync went out by another path (the session's post-reconnect sync): cancel the pending one and restart the interval. */
  markSent(): void {
    this.#cancel();
    this.#lastSentAt = this.#options.timers.now();
  }

  /** Back to `minIntervalMs` (a new turn or a new connection: holes may mean something again). */
  resetBackoff(): void {
    this.#sentSinceReset = 0;
    this.#intervalMs = this.#minIntervalMs;
  }

  /** Cancel a pending sync (the link dropped; the reconnect re-syncs). New requests are still accepted. */
  cancel(): void {
    this.#cancel();
  }

  /** Cancel a pending sync and refuse new ones. */
  stop(): void {
    this.#stopped = true;
    this.#cancel();
  }

  #cancel(): void {
    if (this.#timer !== undefined) this.#options.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
