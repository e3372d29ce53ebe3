/**
 * TCP-level bounds, before any byte is parsed: a cap on open connections in total and per
 * remote address, and a deadline for finishing the HTTP request or WebSocket upgrade. When the
 * total cap is reached, the oldest connection still in its handshake makes room for the new
 * one (established, authenticated sockets are never evicted), so clients that never finish
 * their upgrade cannot lock others out.
 */
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { unrefTimer, type TimerHandle, type Timers } from "toolrelay/protocol";
import type { RelayLogger } from "./relay-options.js";

export interface ConnectionGuardOptions {
  maxConnections: number;
  maxConnectionsPerAddress: number;
  handshakeTimeoutMs: number;
  timers: Timers;
  logger: RelayLogger;
}

/** Counters of what the guard did, for `relay.stats()`. */
export interface ConnectionStats {
  open: number;
  /** Open and not yet upgraded (or serving one HTTP request). */
  handshaking: number;
  refusedPerAddress: number;
  refusedTotal: number;
  /** Handshaking connections closed to make room for a new one. */
  evicted: number;
  /** Connections closed because their handshake took longer than the deadline. */
  timedOut: number;
}

interface Entry {
  address: string;
  timer: TimerHandle | undefined;
}

const REFUSAL = (reason: string): string => {
  const body = JSON.stringify({ error: "Service Unavailable", message: reason });
  return `HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

export class ConnectionGuard {
  #options: ConnectionGuardOptions;
  #open = new Map<Duplex, Entry>();
  /** Connections still in their handshake, oldest first. */
  #handshaking = new Set<Duplex>();
  #perAddress = new Map<string, number>();
  #stats = { refusedPerAddress: 0, refusedTotal: 0, evicted: 0, timedOut: 0 };

  constructor(options: ConnectionGuardOptions) {
    this.#options = options;
  }

  /** A new TCP connection (the server's `connection` event). */
  admit(socket: Socket): void {
    socket.on("error", () => {});
    const address = socket.remoteAddress ?? "unknown";
    const fromAddress = this.#perAddress.get(address) ?? 0;
    if (fromAddress >= this.#options.maxConnectionsPerAddress) {
      this.#stats.refusedPerAddress++;
      this.#refuse(socket, "too many connections from this address");
      return;
    }
    if (this.#open.size >= this.#options.maxConnections) {
      const oldest = this.#handshaking.values().next();
      if (oldest.done) {
        this.#stats.refusedTotal++;
        this.#refuse(socket, "the relay is at its connection limit");
        return;
      }
      this.#stats.evicted++;
      this.#options.logger.debug("relay: oldest unfinished handshake closed to admit a new connection");
      this.#forget(oldest.value);
      oldest.value.destroy();
    }
    const timer = this.#options.timers.setTimeout(() => {
      if (!this.#handshaking.has(socket)) return;
      this.#stats.timedOut++;
      this.#forget(socket);
      socket.destroy();
    }, this.#options.handshakeTimeoutMs);
    unrefTimer(timer);
    this.#open.set(socket, { address, timer });
    this.#handshaking.add(socket);
    this.#perAddress.set(address, fromAddress + 1);
    socket.once("close", () => this.#forget(socket));
  }

  /** The connection finished its WebSocket upgrade: no deadline any more, never evicted. */
  established(socket: Duplex): void {
    const entry = this.#open.get(socket);
    if (!entry) return;
    this.#handshaking.delete(socket);
    if (entry.timer !== undefined) this.#options.timers.clearTimeout(entry.timer);
    entry.timer = undefined;
  }

  stats(): ConnectionStats {
    return { open: this.#open.size, handshaking: this.#handshaking.size, ...this.#stats };
  }

  /** Stops every deadline (shutdown). */
  stop(): void {
    for (const entry of this.#open.values()) if (entry.timer !== undefined) this.#options.timers.clearTimeout(entry.timer);
  }

  #refuse(socket: Socket, reason: string): void {
    this.#options.logger.debug("relay: connection refused", { reason });
    socket.write(REFUSAL(reason));
    socket.destroy();
  }

  #forget(socket: Duplex): void {
    const entry = this.#open.get(socket);
    if (!entry) return;
    this.#open.delete(socket);
    this.#handshaking.delete(socket);
    if (entry.timer !== undefined) this.#options.timers.clearTimeout(entry.timer);
    const left = (this.#perAddress.get(entry.address) ?? 1) - 1;
    if (left <= 0) this.#perAddress.delete(entry.address);
    else this.#perAddress.set(entry.address, left);
  }
}
