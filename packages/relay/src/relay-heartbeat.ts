/**
 * The relay's periodic tick: every `heartbeatIntervalMs` (each minute when heartbeats are off)
 * it sweeps the listener registry, and — unless heartbeats are off — pings every accepted socket
 * of either endpoint, terminating one that did not answer the previous ping with a pong.
 */
import type { WebSocket, WebSocketServer } from "ws";
import { unrefTimer, type TimerHandle, type Timers } from "toolrelay/protocol";

export interface RelayHeartbeatOptions {
  timers: Timers;
  /** 0: no pings (the registry is still swept). */
  heartbeatIntervalMs: number;
  /** The socket servers whose clients are pinged. */
  servers: readonly WebSocketServer[];
  /** Periodic housekeeping run on every tick (the registry's sweep). */
  sweep(): void;
}

export class RelayHeartbeat {
  #options: RelayHeartbeatOptions;
  #alive = new WeakMap<WebSocket, boolean>();
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(options: RelayHeartbeatOptions) {
    this.#options = options;
    this.#schedule();
  }

  /** Counts `socket` as alive now and on every pong it sends. */
  track(socket: WebSocket): void {
    this.#alive.set(socket, true);
    socket.on("pong", () => this.#alive.set(socket, true));
  }

  /** No more ticks. Idempotent. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#options.timers.clearTimeout(this.#timer);
  }

  #schedule(): void {
    const { timers, heartbeatIntervalMs } = this.#options;
    this.#timer = timers.setTimeout(() => {
      this.#tick();
      if (!this.#stopped) this.#schedule();
    }, heartbeatIntervalMs || 60_000);
    unrefTimer(this.#timer);
  }

  #tick(): void {
    this.#options.sweep();
    if (this.#options.heartbeatIntervalMs === 0) return;
    for (const server of this.#options.servers) {
      for (const socket of server.clients) {
        if (this.#alive.get(socket) === false) {
          socket.terminate();
          continue;
        }
        this.#alive.set(socket, false);
        socket.ping();
      }
    }
  }
}
