/**
 * Deadlines of running calls with ONE timer per distinct timeout: calls that share a timeout reach
 * their deadlines in the order they started, so each timeout keeps a FIFO of its running calls and
 * a timer for its head. A call costs an array slot, not a timer; clearing 100,000 calls is one
 * `clearTimeout` per timeout; a call that settles in its first step (a synchronous tool) arms none.
 * This is where the table's running calls are counted and found.
 */
import type { TimerHandle, Timers } from "../internal/timers.js";
import { RecordQueue, type CallRecord } from "./call-record.js";

interface Lane {
  readonly queue: RecordQueue;
  timer: TimerHandle | undefined;
}

export class DeadlineQueue {
  /** Running calls. */
  size = 0;
  #lanes = new Map<number, Lane>();
  #timers: Timers;
  #now: () => number;
  #expire: (record: CallRecord) => void;

  /** `expire(record)` runs at `record.deadlineFrom + record.deadlineMs` (on the clock `now`) if the call still runs. */
  constructor(timers: Timers, now: () => number, expire: (record: CallRecord) => void) {
    this.#timers = timers;
    this.#now = now;
    this.#expire = expire;
  }

  /** Every running call (a snapshot). */
  live(): CallRecord[] {
    return [...this.#lanes.values()].flatMap((lane) => lane.queue.live());
  }

  /** Timers armed (one per timeout with a running call). */
  get timerCount(): number {
    return [...this.#lanes.values()].filter((lane) => lane.timer !== undefined).length;
  }

  /** A call starts running (calls are added in start order); `watch` it once it still runs after its first step. */
  add(record: CallRecord): void {
    const lane = this.#lanes.get(record.deadlineMs) ?? this.#open(record.deadlineMs);
    lane.queue.push(record);
    this.size++;
  }

  /** Make sure the lane of a running call has its timer (a call that settled at once never needs one). */
  watch(record: CallRecord): void {
    const lane = this.#lanes.get(record.deadlineMs);
    if (lane !== undefined && lane.timer === undefined) this.#arm(lane, record.deadlineMs);
  }

  /**
   * A running call gets a new deadline, `deadlineMs` from now (its approval began, or it was
   * approved and starts). It is queued again in that lane (its old entry goes stale), so each
   * lane stays in deadline order.
   */
  reschedule(record: CallRecord, deadlineMs: number): void {
    const previous = this.#lanes.get(record.deadlineMs);
    record.deadlineFrom = this.#now();
    record.deadlineMs = deadlineMs;
    const lane = this.#lanes.get(deadlineMs) ?? this.#open(deadlineMs);
    lane.queue.push(record);
    if (lane.timer === undefined) this.#arm(lane, deadlineMs);
    if (previous !== undefined && previous !== lane && previous.timer !== undefined && previous.queue.peek() === undefined) {
      this.#timers.clearTimeout(previous.timer);
      previous.timer = undefined;
    }
  }

  /** `record` left the running state; the timer goes with the lane's last running call (the lane stays for the next). */
  release(record: CallRecord): void {
    const lane = this.#lanes.get(record.deadlineMs);
    if (lane === undefined) return;
    this.size--;
    // Peek always: it is what lets the lane's queue drop settled records (a lane without a timer too).
    if (lane.queue.peek() !== undefined || lane.timer === undefined) return;
    this.#timers.clearTimeout(lane.timer);
    lane.timer = undefined;
  }

  /** Drop every deadline and timer. */
  clear(): void {
    for (const lane of this.#lanes.values()) if (lane.timer !== undefined) this.#timers.clearTimeout(lane.timer);
    this.#lanes.clear();
    this.size = 0;
  }

  #open(timeoutMs: number): Lane {
    const lane: Lane = { queue: new RecordQueue("running"), timer: undefined };
    this.#lanes.set(timeoutMs, lane);
    return lane;
  }

  #arm(lane: Lane, timeoutMs: number): void {
    const next = lane.queue.peek();
    if (next !== undefined)
      lane.timer = this.#timers.setTimeout(() => this.#fire(lane, timeoutMs), Math.max(0, next.deadlineFrom + timeoutMs - this.#now()));
  }

  /** Expire every call past its deadline (each leaves the running state, so `peek` moves on). */
  #fire(lane: Lane, timeoutMs: number): void {
    lane.timer = undefined;
    const now = this.#now();
    for (let next = lane.queue.peek(); next !== undefined && next.deadlineFrom + timeoutMs <= now; next = lane.queue.peek())
      this.#expire(next);
    if (this.#lanes.get(timeoutMs) === lane) this.#arm(lane, timeoutMs);
  }
}
