/**
 * The frames one socket has sent and the relay has not processed yet, in order. Frames are
 * scanned and handled in slices when the scheduler gives this queue a turn (fair-scheduler.ts).
 * While the queue holds more than {@link QUEUE_HIGH_WATER} bytes (or frames) the socket is paused,
 * so a flooding peer is held back by TCP instead of filling the relay's memory.
 */
import type { WebSocket } from "ws";
import type { FairScheduler, SliceSource } from "./fair-scheduler.js";
import { FrameScanner } from "./frame-scanner.js";
import { RelayFrame } from "./relay-frame.js";

/** Pause the socket above this many queued bytes (or {@link QUEUE_HIGH_FRAMES} frames)… */
export const QUEUE_HIGH_WATER = 1024 * 1024;
export const QUEUE_HIGH_FRAMES = 1024;
/** …and resume it below a quarter of that. */
const QUEUE_LOW_WATER = QUEUE_HIGH_WATER / 4;
const QUEUE_LOW_FRAMES = QUEUE_HIGH_FRAMES / 4;

/** Work units a handled frame costs on top of its scan (routing, sending). */
export const FRAME_COST = 4 * 1024;

/** Why a socket is not read: its own queue is full, or what it feeds is congested. */
export type HoldReason = "queue" | "congestion";

export interface InboundQueueOptions {
  socket: WebSocket;
  scheduler: FairScheduler;
  /** The tenant the socket's frames are processed for. */
  group: string;
  /** One frame, in arrival order; `undefined` when it is not a JSON object with a string `type`. */
  handle(frame: RelayFrame | undefined, data: Buffer): void;
}

export class InboundQueue implements SliceSource {
  #options: InboundQueueOptions;
  #frames: Buffer[] = [];
  #bytes = 0;
  #current: { data: Buffer; scanner: FrameScanner } | undefined;
  #holds = new Set<HoldReason>();
  #discarded = false;

  constructor(options: InboundQueueOptions) {
    this.#options = options;
  }

  /** Frames waiting (the one being scanned included). */
  get length(): number {
    return this.#frames.length + (this.#current ? 1 : 0);
  }

  /** A message arrived on the socket. */
  push(data: Buffer): void {
    if (this.#discarded) return;
    this.#frames.push(data);
    this.#bytes += data.length;
    if (this.#bytes > QUEUE_HIGH_WATER || this.#frames.length > QUEUE_HIGH_FRAMES) this.hold("queue");
    this.#options.scheduler.wake(this.#options.group, this);
  }

  /** Stops reading the socket for `reason` (until {@link release} of every reason). */
  hold(reason: HoldReason): void {
    if (this.#holds.has(reason)) return;
    this.#holds.add(reason);
    if (this.#holds.size === 1) this.#options.socket.pause();
  }

  release(reason: HoldReason): void {
    if (!this.#holds.delete(reason)) return;
    if (this.#holds.size === 0) this.#options.socket.resume();
  }

  /** Forgets every waiting frame (the socket's environment or session is gone). */
  discard(): void {
    this.#discarded = true;
    this.#frames.length = 0;
    this.#bytes = 0;
    this.#current = undefined;
  }

  runSlice(budget: number): boolean {
    let spent = 0;
    while (spent < budget && !this.#discarded) {
      if (!this.#current) {
        const data = this.#frames.shift();
        if (data === undefined) break;
        this.#bytes -= data.length;
        this.#current = { data, scanner: new FrameScanner(data) };
      }
      const { data, scanner } = this.#current;
      spent += scanner.step(budget - spent);
      if (!scanner.done) break;
      this.#current = undefined;
      spent += FRAME_COST;
      this.#options.handle(RelayFrame.from(data, scanner.result()), data);
    }
    if (this.#holds.has("queue") && this.#bytes < QUEUE_LOW_WATER && this.#frames.length < QUEUE_LOW_FRAMES) this.release("queue");
    return !this.#discarded && (this.#current !== undefined || this.#frames.length > 0);
  }
}
