/**
 * Deadlines of running calls with ONE timer per distinct timeout: calls that
 * share a timeout reach their deadlines in the order they started, so each
 * timeout keeps a FIFO of calls and a timer for its head. A call costs an array
 * slot, not a timer; clearing 100,000 calls is one `clearTimeout` per timeout.
 * Items no longer live are skipped when they reach the head. The live items
 * are the table's running calls: this is where they are counted and found.
 */
import type { TimerHandle, Timers } from "../internal/timers.js";

interface Lane<T> {
  readonly timeoutMs: number;
  readonly items: T[];
  head: number;
  live: number;
  timer: TimerHandle | undefined;
}

export class DeadlineQueue<T> {
  #lanes = new Map<number, Lane<T>>();
  #timers: Timers;
  #now: () => number;
  #deadlineOf: (item: T) => number;
  #isLive: (item: T) => boolean;
  #expire: (item: T) => void;

  /**
   * `expire(item)` runs at `deadlineOf(item)` (on the clock `now`) if `isLive(item)`. An item's
   * deadline is its start plus its lane's timeout: items are added in start order.
   */
  constructor(timers: Timers, now: () => number, deadlineOf: (item: T) => number, isLive: (item: T) => boolean, expire: (item: T) => void) {
    this.#timers = timers;
    this.#now = now;
    this.#deadlineOf = deadlineOf;
    this.#isLive = isLive;
    this.#expire = expire;
  }

  /** Live items (the running calls). */
  get size(): number {
    let live = 0;
    for (const lane of this.#lanes.values()) live += lane.live;
    return live;
  }

  /** Every live item (a snapshot). */
  live(): T[] {
    const items: T[] = [];
    for (const lane of this.#lanes.values())
      for (let index = lane.head; index < lane.items.length; index++) if (this.#isLive(lane.items[index]!)) items.push(lane.items[index]!);
    return items;
  }

  /** Timers armed (one per timeout with a live item). */
  get timerCount(): number {
    return [...this.#lanes.values()].filter((lane) => lane.timer !== undefined).length;
  }

  add(item: T, timeoutMs: number): void {
    let lane = this.#lanes.get(timeoutMs);
    if (lane === undefined) {
      lane = { timeoutMs, items: [], head: 0, live: 0, timer: undefined };
      this.#lanes.set(timeoutMs, lane);
    }
    lane.items.push(item);
    lane.live++;
    if (lane.timer === undefined) this.#arm(lane);
  }

  /** One item of this timeout is no longer live; the lane and its timer go with the last one. */
  release(timeoutMs: number): void {
    const lane = this.#lanes.get(timeoutMs);
    if (lane !== undefined && --lane.live === 0) this.#drop(lane);
  }

  /** Drop every deadline and timer. */
  clear(): void {
    for (const lane of this.#lanes.values()) this.#drop(lane);
  }

  #drop(lane: Lane<T>): void {
    if (lane.timer !== undefined) this.#timers.clearTimeout(lane.timer);
    this.#lanes.delete(lane.timeoutMs);
  }

  #arm(lane: Lane<T>): void {
    while (lane.head < lane.items.length && !this.#isLive(lane.items[lane.head]!)) lane.head++;
    const next = lane.items[lane.head];
    if (next === undefined) {
      this.#drop(lane);
      return;
    }
    if (lane.head > 1_024 && lane.head * 2 > lane.items.length) {
      lane.items.splice(0, lane.head);
      lane.head = 0;
    }
    lane.timer = this.#timers.setTimeout(() => this.#fire(lane), Math.max(0, this.#deadlineOf(next) - this.#now()));
  }

  #fire(lane: Lane<T>): void {
    lane.timer = undefined;
    const now = this.#now();
    while (lane.head < lane.items.length && this.#deadlineOf(lane.items[lane.head]!) <= now) {
      const item = lane.items[lane.head++]!;
      if (this.#isLive(item)) this.#expire(item);
    }
    if (this.#lanes.get(lane.timeoutMs) === lane) this.#arm(lane);
  }
}
