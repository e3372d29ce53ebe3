import type { TimerHandle, Timers } from "../internal/timers.js";

/**
 * Detects real losses in the listener's `event_seq` numbering on a cloud link.
 *
 * `event_seq` is one counter per listener connection, across all runtimes and
 * both status channels (docs/protocol.md#event-envelope). Over the relay the control and the
 * stream socket are independent TCP streams, so the numbers of the two
 * channels interleave: stream may deliver 8 before control delivers 7. Reacting
 * to every forward jump (what Letta's own SDK does) turns ordinary interleaving
 * into a `sync` storm (docs/protocol.md#traps).
 *
 * The rule here:
 * - One watermark across **both** sockets. The first number seen after a
 *   (re)connect sets it; numbers at or below it are old news (never a gap).
 * - A number above `highest + 1` opens a *hole* (the missing range), stamped
 *   with the time it was noticed. A later arrival inside a hole fills that
 *   number, on either socket.
 * - A hole still (partly) open `reorderWindowMs` after it was noticed is a
 *   loss: `onGap` is called once for all holes that expired together, and
 *   those holes are forgotten (the `sync` it triggers re-reads the state).
 * - More than `maxHoles` distinct holes at once counts as a loss at once.
 *
 * The detector never drops frames; it only says when to re-sync. Non-numeric,
 * non-integer or non-positive `event_seq` values are ignored.
 */
export interface EventSequenceGapDetectorOptions {
  /** How long a missing number may take to show up on the other socket before it counts as lost, in ms. Default 1_000. */
  reorderWindowMs?: number | undefined;
  /** Distinct open holes tolerated at once; one more counts as a loss immediately. Default 256. */
  maxHoles?: number | undefined;
  timers: Timers;
  /** Called when numbers were lost: from the window timer, or from `observe` when `maxHoles` overflows. */
  onGap: (gap: EventSequenceGap) => void;
}

export interface EventSequenceGap {
  /** How many event numbers never arrived. */
  missing: number;
  /** Lowest missing number. */
  from: number;
  /** Highest missing number. */
  to: number;
}

/** Default reorder window of the gap detector. */
export const DEFAULT_GAP_REORDER_WINDOW_MS = 1_000;

interface Hole {
  from: number;
  to: number;
  noticedAt: number;
}

export class EventSequenceGapDetector {
  #options: EventSequenceGapDetectorOptions;
  #reorderWindowMs: number;
  #maxHoles: number;
  #highest: number | undefined;
  #holes: Hole[] = []; // sorted by `from`, non-overlapping
  #timer: TimerHandle | undefined;
  #timerDueAt = 0;

  constructor(options: EventSequenceGapDetectorOptions) {
    this.#options = options;
    this.#reorderWindowMs = Math.max(0, options.reorderWindowMs ?? DEFAULT_GAP_REORDER_WINDOW_MS);
    this.#maxHoles = Math.max(1, options.maxHoles ?? 256);
  }

  /** Highest `event_seq` seen since the last reset. */
  get highest(): number | undefined {
    return this.#highest;
  }

  /** Event numbers currently missing but still inside their reorder window. */
  get missing(): number {
    let count = 0;
    for (const hole of this.#holes) count += hole.to - hole.from + 1;
    return count;
  }

  /** Record one arrival (from either socket). */
  observe(eventSeq: unknown): void {
    if (typeof eventSeq !== "number" || !Number.isSafeInteger(eventSeq) || eventSeq < 1) return;
    if (this.#highest === undefined) {
      this.#highest = eventSeq;
      return;
    }
    if (eventSeq > this.#highest) {
      if (eventSeq > this.#highest + 1) {
        this.#holes.push({ from: this.#highest + 1, to: eventSeq - 1, noticedAt: this.#options.timers.now() });
      }
      this.#highest = eventSeq;
      if (this.#holes.length > this.#maxHoles) {
        this.#expire(Number.POSITIVE_INFINITY);
        return;
      }
    } else {
      this.#fill(eventSeq);
    }
    this.#arm();
  }

  /** Forget everything (a new connection starts a new watermark). Clears the timer. */
  reset(): void {
    this.#highest = undefined;
    this.#holes = [];
    this.#disarm();
  }

  #fill(eventSeq: number): void {
    const index = this.#holes.findIndex((hole) => hole.from <= eventSeq && eventSeq <= hole.to);
    if (index === -1) return; // old news or a duplicate
    const hole = this.#holes[index]!;
    const pieces: Hole[] = [];
    if (hole.from < eventSeq) pieces.push({ from: hole.from, to: eventSeq - 1, noticedAt: hole.noticedAt });
    if (eventSeq < hole.to) pieces.push({ from: eventSeq + 1, to: hole.to, noticedAt: hole.noticedAt });
    this.#holes.splice(index, 1, ...pieces);
  }

  /** Report and forget every hole noticed at or before `noticedBy`. */
  #expire(noticedBy: number): void {
    const expired = this.#holes.filter((hole) => hole.noticedAt <= noticedBy);
    this.#holes = this.#holes.filter((hole) => hole.noticedAt > noticedBy);
    this.#arm();
    if (expired.length === 0) return;
    let missing = 0;
    for (const hole of expired) missing += hole.to - hole.from + 1;
    const gap: EventSequenceGap = { missing, from: expired[0]!.from, to: expired[expired.length - 1]!.to };
    this.#options.onGap(gap);
  }

  #arm(): void {
    if (this.#holes.length === 0) {
      this.#disarm();
      return;
    }
    let oldest = Number.POSITIVE_INFINITY;
    for (const hole of this.#holes) oldest = Math.min(oldest, hole.noticedAt);
    const dueAt = oldest + this.#reorderWindowMs;
    if (this.#timer !== undefined && this.#timerDueAt === dueAt) return;
    this.#disarm();
    this.#timerDueAt = dueAt;
    const delay = Math.max(0, dueAt - this.#options.timers.now());
    this.#timer = this.#options.timers.setTimeout(() => {
      this.#timer = undefined;
      this.#expire(this.#options.timers.now() - this.#reorderWindowMs);
    }, delay);
  }

  #disarm(): void {
    if (this.#timer !== undefined) this.#options.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
