import type { TimerHandle, Timers } from "../internal/timers.js";

/**
 * Debounces the recovery `sync` a cloud link sends after a lost event.
 *
 * The frame is `{"type":"sync","runtime":…,"recover_approvals":true,
 * "force_device_status":true}` on the control socket, with no `request_id`
 * (so the runtime sends no `sync_response`; the state arrives as ordinary
 * snapshot and `control_request` frames). Each one makes the runtime probe the
 * backend for approvals, so bursts are collapsed:
 * - requests within `debounceMs` of the first one become one sync;
 * - two syncs are at least `minIntervalMs` apart;
 * - a sync the session sends itself (after a reconnect) counts too
 *   (`markSent`), and cancels a pending one.
 */
export interface CloudSyncTriggerOptions {
  /** Collect requests for this long before sending, in ms. Default 250. */
  debounceMs?: number;
  /** Least time between two syncs, in ms. Default 5_000. */
  minIntervalMs?: number;
  timers: Timers;
  /** Write the sync frame; return `false` when it could not be written (link down: dropped, the reconnect re-syncs). */
  send: () => boolean;
}

export const DEFAULT_SYNC_DEBOUNCE_MS = 250;
export const DEFAULT_SYNC_MIN_INTERVAL_MS = 5_000;

export class CloudSyncTrigger {
  #options: CloudSyncTriggerOptions;
  #debounceMs: number;
  #minIntervalMs: number;
  #timer: TimerHandle | undefined;
  #lastSentAt: number | undefined;
  #sent = 0;
  #stopped = false;

  constructor(options: CloudSyncTriggerOptions) {
    this.#options = options;
    this.#debounceMs = Math.max(0, options.debounceMs ?? DEFAULT_SYNC_DEBOUNCE_MS);
    this.#minIntervalMs = Math.max(0, options.minIntervalMs ?? DEFAULT_SYNC_MIN_INTERVAL_MS);
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
    if (this.#lastSentAt !== undefined) dueAt = Math.max(dueAt, this.#lastSentAt + this.#minIntervalMs);
    this.#timer = this.#options.timers.setTimeout(() => {
      this.#timer = undefined;
      if (this.#stopped) return;
      if (this.#options.send()) {
        this.#sent++;
        this.#lastSentAt = this.#options.timers.now();
      }
    }, dueAt - now);
  }

  /** A sync went out by another path (the session's post-reconnect sync): cancel the pending one and restart the interval. */
  markSent(): void {
    this.#cancel();
    this.#lastSentAt = this.#options.timers.now();
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
