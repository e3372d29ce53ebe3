/**
 * The writes of one scheduler turn leave together. Each `ws` `send()` is otherwise its own
 * `writev` system call; a turn that forwards several frames to one socket (many calls in flight)
 * spent most of the relay's time in those calls. While a turn runs, the first write to a socket
 * corks its TCP stream; when the turn ends, every corked stream is uncorked and its frames leave in
 * one `writev`, in order. Writes outside a turn (pongs, HTTP-triggered closes) are not held.
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
