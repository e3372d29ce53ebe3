/**
 * The writes of one scheduler turn leave together. Each `ws` `send()` is otherwise its own
 * `writev` system call; a turn that forwards several frames to one socket (many calls in flight)
 * spent most of the relay's time in those calls. While a turn runs, the first write to a socket
 * corks its TCP stream; when the turn ends, every corked stream is uncorked and its frames leave in
 * one `writev`, in order. Writes outside a turn (pongs, HTTP-triggered closes) are not held, unless
 * they come while a hold ({@link TurnWriteBatch.holdUntilImmediate}) is open.
 *
 * The raw stream of each socket is the one the upgrade handed over ({@link rememberRawSocket});
 * a socket without one is written as it is.
 */
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";

const rawStreams = new WeakMap<WebSocket, Duplex>();

/** Records the TCP stream under an accepted WebSocket. */
export function rememberRawSocket(socket: WebSocket, raw: Duplex): void {
  rawStreams.set(socket, raw);
}

export class TurnWriteBatch {
  #open = false;
  #corked: Duplex[] = [];

  /** A turn starts: writes are held from now on. */
  begin(): void {
    this.#open = true;
  }

  /** Call right before a write on `socket`. */
  beforeWrite(socket: WebSocket): void {
    if (!this.#open) return;
    const raw = rawStreams.get(socket);
    if (raw === undefined || this.#corked.includes(raw)) return;
    raw.cork();
    this.#corked.push(raw);
  }

  /**
   * Holds writes from now until the event loop's next check phase (`setImmediate`), unless a turn
   * is open already. For frames routed outside a turn — in cluster mode each tool call goes on once
   * its key-value write is acknowledged, and one read of the NATS socket acknowledges many — so
   * the frames of one read leave in one `writev` per socket too. A turn that begins and ends
   * meanwhile lets the held writes go with its own.
   */
  holdUntilImmediate(): void {
    if (this.#open) return;
    this.begin();
    // biome-ignore lint/style/noRestrictedGlobals: the hold ends after pending I/O (one event-loop turn), not after a time
    setImmediate(() => this.end());
  }

  /** The turn ended: every held write leaves. */
  end(): void {
    this.#open = false;
    const corked = this.#corked;
    if (corked.length === 0) return;
    this.#corked = [];
    for (const raw of corked) if (!raw.destroyed) raw.uncork();
  }
}

/** The batch of the turn running now (turns are synchronous, so one is enough per process). */
export const turnWrites = new TurnWriteBatch();
