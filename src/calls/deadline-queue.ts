/**
 * Deadlines of running calls with ONE timer per distinct timeout: calls that
 * share a timeout reach their deadlines in the order they started, so each
 * timeout keeps a FIFO of calls and a timer for its head. A call costs an array
 * slot, not a timer; `clear()` of 100,000 calls is one `clearTimeout` per
 * timeout. Settled calls are skipped when they reach the head.
 */
import type { TimerHandle, Timers } from "../internal/timers.js";

interface Lane<T> {
  readonly timeoutMs: number;
  readonly items: Array<{ item: T; deadline: number }>;
  head: number;
  live: number;
  timer: TimerHandle | undefined;
}

export class DeadlineQueue<T> {
  #lanes = new Map<number, Lane<T>>();
  #timers: Timers;
  #now: () => number;
  #isLive: (item: T) => boolean;
  #expire: (item: T) => void;

  /** `expire` is called at an item's deadline if `isLive(item)` still holds; `now` is the clock deadlines are kept in. */
  constructor(timers: Timers, now: () => number, isLive: (item: T) => boolean, expire: (item: T) => void) {
    this.#timers = timers;
    this.#now = now;
    this.#isLive = isLive;
    this.#expire = expire;
  }

  /** Timers armed (one per timeout with a live call). */
  get timerCount(): number {
    let count = 0;
    for (const lane of this.#lanes.values()) if (lane.timer !== undefined) count++;
    return count;
  }

  add(item: T, timeoutMs: number): void {
    let lane = this.#lanes.get(timeoutMs);
    if (lane === undefined) {
      lane = { timeoutMs, items: [], head: 0, live: 0, timer: undefined };
      this.#lanes.set(timeoutMs, lane);
    }
    lane.items.push({ item, deadline: this.#now() + timeoutMs });
    lane.live++;
    if (lane.timer === undefined) this.#arm(lane);
  }

  /** `item` (of this timeout) is no longer live; the lane's timer goes with its last live item. */
  release(timeoutMs: number): void {
    const lane = this.#lanes.get(timeoutMs);
    if (lane === undefined || --lane.live > 0) return;
    this.#reset(lane);
  }

  /** Drop every deadline and timer. */
  clear(): void {
    for (const lane of this.#lanes.values()) this.#reset(lane);
  }

  #reset(lane: Lane<T>): void {
    if (lane.timer !== undefined) this.#timers.clearTimeout(lane.timer);
    this.#lanes.delete(lane.timeoutMs);
  }

  #arm(lane: Lane<T>): void {
    while (lane.head < lane.items.length && !this.#isLive(lane.items[lane.head]!.item)) lane.head++;
    const next = lane.items[lane.head];
    if (next === undefined) return this.#reset(lane);
    if (lane.head > 1_024 && lane.head * 2 > lane.items.length) {
      lane.items.splice(0, lane.head);
      lane.head = 0;
    }
    lane.timer = this.#timers.setTimeout(() => this.#fire(lane), Math.max(0, next.deadline - this.#now()));
  }

  #fire(lane: Lane<T>): void {
    lane.timer = undefined;
    const now = this.#now();
    while (lane.head < lane.items.length && lane.items[lane.head]!.deadline <= now) {
      const { item } = lane.items[lane.head++]!;
      if (this.#isLive(item)) this.#expire(item);
    }
    if (this.#lanes.get(lane.timeoutMs) === lane) this.#arm(lane);
  }
}
