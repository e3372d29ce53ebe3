/**
 * Test fixtures for the cloud link: a tiny status relay on raw `ws` (real
 * sockets on 127.0.0.1, port 0) that a test scripts frame by frame, and a
 * manual clock implementing `Timers`.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import type { TimerHandle, Timers } from "../../packages/toolrelay/src/internal/timers.js";
import { until } from "../support/wait.js";

export type Channel = "control" | "stream";

export interface RelaySocket {
  channel: Channel;
  socket: WebSocket;
  url: URL;
  headers: IncomingMessage["headers"];
  /** Parsed JSON frames the SDK sent on this socket, in order. */
  received: Array<Record<string, unknown>>;
  /** Protocol-level pings the SDK sent on this socket. */
  protocolPings: number;
  closed: boolean;
}

export interface FakeRelayOptions {
  /** Answer `{"type":"ping"}` with `{"type":"pong"}` (on every channel, or on one only). Default true. */
  answerPings?: boolean | Channel;
  /**
   * Answer protocol-level pings with a pong (on every channel, or on one only). Default: the same
   * as `answerPings` (a dead socket answers nothing).
   */
  answerProtocolPings?: boolean | Channel;
  /** Stamp pongs with a delivery `seq` (so a test can see the SDK read them: it acks). Default false. */
  pongSeq?: boolean;
  /** Refuse upgrades of this channel (or all) with this HTTP status. */
  refuse?: { status: number; channel?: Channel };
  /** Hold the upgrade of this channel for `ms` before accepting it. */
  delayUpgrade?: { channel: Channel; ms: number };
}

export class FakeStatusRelay {
  readonly sockets: RelaySocket[] = [];
  options: FakeRelayOptions;
  #server: Server;
  #wss: WebSocketServer;
  #timers = new Set<ReturnType<typeof setTimeout>>();
  #pongSeq = 10_000;

  private constructor(server: Server, wss: WebSocketServer, options: FakeRelayOptions) {
    this.#server = server;
    this.#wss = wss;
    this.options = options;
  }

  static async start(options: FakeRelayOptions = {}): Promise<FakeStatusRelay> {
    const server = createServer((_request, response) => {
      response.statusCode = 404;
      response.end();
    });
    const wss = new WebSocketServer({ noServer: true, autoPong: false });
    const relay = new FakeStatusRelay(server, wss, options);
    server.on("upgrade", (request, socket, head) => relay.#upgrade(request, socket as import("node:net").Socket, head));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return relay;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The newest socket of a channel. */
  current(channel: Channel): RelaySocket {
    const found = this.sockets.filter((entry) => entry.channel === channel).at(-1);
    if (!found) throw new Error(`no ${channel} socket yet`);
    return found;
  }

  /** Number of pairs opened so far (counted on control). */
  get controlConnections(): number {
    return this.sockets.filter((entry) => entry.channel === "control").length;
  }

  send(channel: Channel, frame: unknown): void {
    this.current(channel).socket.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** Frames of one type the SDK sent on a channel's newest socket (or all sockets of the channel). */
  receivedOf(channel: Channel, type: string, allSockets = false): Array<Record<string, unknown>> {
    const sockets = allSockets ? this.sockets.filter((entry) => entry.channel === channel) : [this.current(channel)];
    return sockets.flatMap((entry) => entry.received.filter((frame) => frame.type === type));
  }

  async stop(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const entry of this.sockets) entry.socket.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #upgrade(request: IncomingMessage, socket: import("node:net").Socket, head: Buffer): void {
    const url = new URL(request.url ?? "/", "http://relay");
    const channel = url.searchParams.get("channel") as Channel;
    const refuse = this.options.refuse;
    if (refuse && (refuse.channel === undefined || refuse.channel === channel)) {
      socket.end(`HTTP/1.1 ${refuse.status} Refused\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const accept = () =>
      this.#wss.handleUpgrade(request, socket, head, (ws) => {
        const entry: RelaySocket = { channel, socket: ws, url, headers: request.headers, received: [], protocolPings: 0, closed: false };
        this.sockets.push(entry);
        ws.on("ping", (data) => {
          entry.protocolPings++;
          const answer = this.options.answerProtocolPings ?? this.options.answerPings ?? true;
          if (answer === true || answer === channel) ws.pong(data);
        });
        ws.on("message", (data) => {
          let frame: Record<string, unknown>;
          try {
            frame = JSON.parse(data.toString()) as Record<string, unknown>;
          } catch {
            frame = { type: "<not json>" };
          }
          entry.received.push(frame);
          const answer = this.options.answerPings ?? true;
          if (frame.type === "ping" && (answer === true || answer === channel)) {
            ws.send(JSON.stringify(this.options.pongSeq ? { type: "pong", seq: ++this.#pongSeq } : { type: "pong" }));
          }
        });
        ws.on("close", () => {
          entry.closed = true;
        });
        ws.on("error", () => {});
      });
    const delay = this.options.delayUpgrade;
    if (delay && delay.channel === channel) {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        if (!socket.destroyed) accept();
      }, delay.ms);
      this.#timers.add(timer);
    } else accept();
  }
}

/** Resolves once `predicate` is true (`until`, test/support/wait.ts); rejects after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, timeoutMs = 2_000, what = "condition"): Promise<void> {
  await until(predicate, what, timeoutMs);
}

export { letTimePass } from "../support/wait.js";

/** A manual clock: timers fire only inside `advance()`, in due order. */
export class ManualTimers implements Timers {
  #now = 0;
  #nextId = 0;
  #queue = new Map<number, { at: number; callback: () => void }>();

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const id = ++this.#nextId;
    this.#queue.set(id, { at: this.#now + Math.max(0, delayMs), callback });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.#queue.delete((handle as { id: number }).id);
  }

  now(): number {
    return this.#now;
  }

  /** Timers scheduled and not yet fired or cleared. */
  get pending(): number {
    return this.#queue.size;
  }

  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      let nextId: number | undefined;
      let nextAt = Number.POSITIVE_INFINITY;
      for (const [id, entry] of this.#queue) {
        if (entry.at < nextAt || (entry.at === nextAt && id < (nextId ?? Infinity))) {
          nextAt = entry.at;
          nextId = id;
        }
      }
      if (nextId === undefined || nextAt > target) break;
      const entry = this.#queue.get(nextId)!;
      this.#queue.delete(nextId);
      this.#now = entry.at;
      entry.callback();
    }
    this.#now = target;
  }
}
