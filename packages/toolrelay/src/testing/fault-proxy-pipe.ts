/**
 * One direction of a fault-proxy connection: reads chunks from `source` and
 * writes them to `destination` in order, applying the proxy's current faults
 * (latency per chunk, one byte per write, blackhole). Every timer and
 * immediate it owns is cleared by `dispose()`.
 */
import type { Socket } from "node:net";
import type { TimerHandle, Timers } from "../internal/timers.js";

/** What the pipe asks the proxy for each chunk (read at the moment it matters). */
export interface PipeFaults {
  /** Delay added to each chunk when it arrives, in ms (0: none). */
  latencyMs(): number;
  /** Deliver the queue one byte per write (one per event-loop turn). */
  byteByByte(): boolean;
}

export interface PipeCounters {
  delivered(bytes: number): void;
  dropped(bytes: number): void;
}

/** Above this many queued bytes the source is paused until the queue drains (backpressure). */
const HIGH_WATER_BYTES = 1024 * 1024;

interface QueuedChunk {
  data: Buffer;
  dueAt: number;
}

export class FaultPipe {
  readonly #source: Socket;
  readonly #destination: Socket;
  readonly #faults: PipeFaults;
  readonly #counters: PipeCounters;
  readonly #onDrained: () => void;
  readonly #timers: Timers;
  #queue: QueuedChunk[] = [];
  #queuedBytes = 0;
  #timer: TimerHandle | undefined;
  #immediate: NodeJS.Immediate | undefined;
  #blackholed = false;
  #waitingForWrite = false;
  #sourceEnded = false;
  #endForwarded = false;
  #disposed = false;
  /** Why the source is paused: "user" (pauseReading), "backpressure". */
  #holds = new Set<string>();

  /**
   * @param onDrained called once, after the source ended and every queued byte was written
   *   (the pipe then half-closes the destination with FIN, unless blackholed).
   */
  constructor(source: Socket, destination: Socket, faults: PipeFaults, counters: PipeCounters, timers: Timers, onDrained: () => void) {
    this.#source = source;
    this.#timers = timers;
    this.#destination = destination;
    this.#faults = faults;
    this.#counters = counters;
    this.#onDrained = onDrained;
    source.on("data", (chunk: Buffer) => this.#push(chunk));
    source.on("end", () => {
      this.#sourceEnded = true;
      this.#pump();
    });
  }

  /** Drop every byte from now on, queued ones included; never forward an end. Sticky. */
  blackhole(): void {
    this.#blackholed = true;
    this.#counters.dropped(this.#queuedBytes);
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#clearTimers();
    // A blackhole keeps reading (the sender sees a healthy socket) and discards.
    this.#holds.delete("backpressure");
    this.#applyHolds();
  }

  get blackholed(): boolean {
    return this.#blackholed;
  }

  /** Pause or resume reading from the source for `reason`. */
  hold(reason: string, on: boolean): void {
    if (on) this.#holds.add(reason);
    else this.#holds.delete(reason);
    this.#applyHolds();
  }

  /** Stop for good: queued bytes are discarded and every timer cleared. */
  dispose(): void {
    this.#disposed = true;
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#clearTimers();
  }

  #push(chunk: Buffer): void {
    if (this.#disposed) return;
    if (this.#blackholed) {
      this.#counters.dropped(chunk.length);
      return;
    }
    const latency = this.#faults.latencyMs();
    this.#queue.push({ data: chunk, dueAt: latency > 0 ? this.#timers.now() + latency : 0 });
    this.#queuedBytes += chunk.length;
    if (this.#queuedBytes > HIGH_WATER_BYTES) this.hold("backpressure", true);
    this.#pump();
  }

  #pump(): void {
    if (this.#disposed || this.#blackholed || this.#waitingForWrite) return;
    if (this.#timer !== undefined || this.#immediate !== undefined) return;
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!;
      const wait = head.dueAt - this.#timers.now();
      if (wait > 0) {
        this.#timer = this.#timers.setTimeout(() => {
          this.#timer = undefined;
          this.#pump();
        }, wait);
        return;
      }
      if (this.#faults.byteByByte() && head.data.length > 0) {
        // One byte, then the next only after it was handed to the kernel and a full loop turn passed.
        const byte = head.data.subarray(0, 1);
        head.data = head.data.subarray(1);
        if (head.data.length === 0) this.#queue.shift();
        this.#waitingForWrite = true;
        this.#write(byte, () => {
          this.#waitingForWrite = false;
          if (this.#disposed) return;
          // Two check phases: at least one poll phase (where readers read) passes before the next byte.
          // Event-loop turns, not time: no timer of the injected clock can say "after the next poll".
          // biome-ignore lint/style/noRestrictedGlobals: an event-loop turn, not a delay
          this.#immediate = setImmediate(() => {
            // biome-ignore lint/style/noRestrictedGlobals: an event-loop turn, not a delay
            this.#immediate = setImmediate(() => {
              this.#immediate = undefined;
              this.#pump();
            });
          });
        });
        return;
      }
      this.#queue.shift();
      this.#write(head.data);
    }
    if (this.#holds.has("backpressure")) this.hold("backpressure", false);
    if (this.#sourceEnded && !this.#endForwarded) {
      this.#endForwarded = true;
      this.#onDrained();
    }
  }

  /** Write `data` (or count it dropped when the destination is gone); `done` runs once it left, or at once. */
  #write(data: Buffer, done?: () => void): void {
    this.#queuedBytes -= data.length;
    if (data.length === 0 || this.#destination.destroyed || !this.#destination.writable) {
      this.#counters.dropped(data.length);
      done?.();
      return;
    }
    this.#destination.write(data, done && (() => done()));
    this.#counters.delivered(data.length);
  }

  #applyHolds(): void {
    if (this.#source.destroyed) return;
    if (this.#holds.size > 0) this.#source.pause();
    else this.#source.resume();
  }

  #clearTimers(): void {
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    // biome-ignore lint/style/noRestrictedGlobals: the event-loop turn of #pump
    if (this.#immediate !== undefined) clearImmediate(this.#immediate);
    this.#timer = undefined;
    this.#immediate = undefined;
  }
}
