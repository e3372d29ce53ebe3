import { randomBytes } from "node:crypto";
import { EventEmitter } from "eventemitter3";
import type WebSocket from "ws";
import { ToolrelayError, isToolrelayError } from "../errors.js";
import { systemTimers, type Timers } from "../internal/timers.js";
import { beforeWrite } from "./tick-write-batch.js";
import { decodeFrame, encodeFrame, type OutboundFrame } from "../wire/index.js";
import { exponentialBackoff, type BackoffOptions } from "./backoff.js";
import { HeartbeatWatchdog } from "./heartbeat-watchdog.js";
import { openWebSocket, redact, secretForms, type WebSocketConstructor } from "./open-web-socket.js";
import { ReconnectController } from "./reconnect-controller.js";
import type { LinkState, RuntimeLink, RuntimeLinkEvents } from "./runtime-link.js";

/** The local app-server socket's options (every one of them is an option of the local backend, `url` aside). */
export interface LocalLinkOptions {
  /** App-server WebSocket URL, e.g. `ws://127.0.0.1:4500/ws`. `http(s):` is mapped to `ws(s):`; an empty path becomes `/ws`. */
  url: string;
  /** Sent as `Authorization: Bearer <token>` (never in the URL). Default: no auth header. */
  token?: string;
  /** Extra upgrade headers. */
  headers?: Record<string, string>;
  /** Reconnect after a drop. Default `true`. */
  reconnect?: boolean;
  /** Reconnect delays. Default: first retry after ~50 ms, doubling with jitter, capped at 5 s. */
  backoff?: BackoffOptions;
  /** Handshake deadline per attempt, in ms. Default 10_000. */
  connectTimeoutMs?: number;
  /**
   * Protocol-level ping interval, in ms. Default 30_000 (the app-server's own). `0` disables the
   * heartbeat. Any inbound traffic (a frame, a pong, the server's own pings) counts as liveness.
   */
  pingIntervalMs?: number;
  /**
   * A link silent this long after a ping is dead: it is terminated and reconnected. Default
   * twice `pingIntervalMs` (60_000), so a half-open link is detected within 90 s of its last
   * traffic — no tighter than the app-server, which reaps a socket after 90 s without a pong.
   * `0`: pings, no deadline.
   */
  pongTimeoutMs?: number;
  /** Largest inbound frame, in bytes. Default 16 MiB. */
  maxPayload?: number;
  /** WebSocket class. Default `ws`. */
  WebSocket?: WebSocketConstructor;
  /** Timers (inject fake ones in tests). Default: the global timers. */
  timers?: Timers;
}

/** The app-server pings every 30 s; so does the local link. */
export const DEFAULT_LOCAL_PING_INTERVAL_MS = 30_000;
/** Normalise an app-server address the way Letta's own app-server client does. */
export function normaliseAppServerUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new ToolrelayError("INVALID_OPTIONS", `backend.url is not a URL: ${JSON.stringify(input)}`);
  }
  if (url.protocol === "http:") url.protocol = "ws:";
  else if (url.protocol === "https:") url.protocol = "wss:";
  if (url.protocol !== "ws:" && url.protocol !== "wss:") {
    throw new ToolrelayError("INVALID_OPTIONS", `backend.url must be ws://, wss://, http:// or https://, got ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new ToolrelayError("INVALID_OPTIONS", "backend.url must not carry credentials; pass backend.token instead");
  }
  if (url.searchParams.has("token")) {
    throw new ToolrelayError("INVALID_OPTIONS", "backend.url must not carry a token query parameter; pass backend.token instead");
  }
  url.searchParams.delete("channel");
  if (url.pathname === "" || url.pathname === "/") url.pathname = "/ws";
  return url.toString();
}

/**
 * The link to a local Letta Code app-server: one WebSocket. The app-server
 * treats each socket as a new controller, so after a reconnect the session
 * registers its tools again; pending calls of the old socket are gone on the
 * runtime's side (`keepsPendingCallsAcrossReconnect` is `false`).
 */
export class LocalLink extends EventEmitter<RuntimeLinkEvents> implements RuntimeLink {
  readonly connectionId: string;
  readonly keepsPendingCallsAcrossReconnect = false;
  #epoch = 0;
  #state: LinkState = "idle";
  #socket: WebSocket | undefined;
  #url: string;
  #options: LocalLinkOptions;
  #timers: Timers;
  #reconnect: ReconnectController;
  #watchdog: HeartbeatWatchdog<"socket">;
  #secrets: string[];

  constructor(options: LocalLinkOptions) {
    super();
    if (options.token !== undefined && options.token.trim() === "") {
      throw new ToolrelayError("INVALID_OPTIONS", "backend.token is empty; omit it for a server without auth");
    }
    this.#options = options;
    this.#url = normaliseAppServerUrl(options.url);
    this.#timers = options.timers ?? systemTimers;
    this.#secrets = options.token ? secretForms(options.token.trim()) : [];
    const address = new URL(this.#url);
    this.connectionId = `local:${address.host}${address.pathname}#${randomBytes(4).toString("hex")}`;
    const pingIntervalMs = options.pingIntervalMs ?? DEFAULT_LOCAL_PING_INTERVAL_MS;
    this.#watchdog = new HeartbeatWatchdog<"socket">({
      channels: ["socket"],
      pingIntervalMs,
      pongTimeoutMs: options.pongTimeoutMs ?? 2 * pingIntervalMs,
      // A `ws` server (the app-server is one) answers every protocol ping.
      deadlineFromStart: true,
      timers: this.#timers,
      sendPing: () => {
        try {
          this.#socket?.ping();
        } catch {
          // A socket that cannot take a ping surfaces as closing.
        }
      },
      onTimeout: (_channel, silentForMs) => {
        const socket = this.#socket;
        if (!socket) return;
        this.emit("error", new ToolrelayError("CONNECTION_CLOSED", `no traffic for ${silentForMs} ms after a ping: link presumed dead`));
        socket.terminate();
      },
    });
    this.#reconnect = new ReconnectController({
      backoff: exponentialBackoff(options.backoff),
      timers: this.#timers,
      attempt: () => this.#open(),
      onReconnected: () => {
        this.#setState("open");
        this.emit("reconnected");
      },
      onAttemptFailed: (error) => {
        if (isToolrelayError(error)) this.emit("error", error);
      },
      isFatal: (error) => isToolrelayError(error, "UNAUTHORIZED"),
      onGiveUp: () => this.#setState("closed"),
    });
  }

  get state(): LinkState {
    return this.#state;
  }

  get epoch(): number {
    return this.#epoch;
  }

  /** The normalised URL (no credentials ever appear in it). */
  get url(): string {
    return this.#url;
  }

  async connect(): Promise<void> {
    if (this.#state !== "idle") throw new ToolrelayError("INVALID_OPTIONS", `connect() called in state ${this.#state}`);
    this.#setState("connecting");
    try {
      await this.#open();
    } catch (error) {
      this.#setState("closed");
      throw error;
    }
    if ((this.#state as LinkState) === "closed") {
      this.#socket?.terminate();
      throw new ToolrelayError("ABORTED", "the link was closed while connecting");
    }
    this.#setState("open");
  }

  send(frame: OutboundFrame, trusted = false): boolean {
    const socket = this.#socket;
    if (this.#state !== "open" || socket === undefined || socket.readyState !== 1) return false;
    const text = encodeFrame(frame, trusted);
    beforeWrite(socket);
    socket.send(text);
    return true;
  }

  async close(): Promise<void> {
    if (this.#state === "closed" && this.#socket === undefined) return;
    this.#reconnect.stop();
    this.#watchdog.stop();
    const socket = this.#socket;
    this.#socket = undefined;
    this.#setState("closed");
    if (socket === undefined || socket.readyState === 3) return;
    await new Promise<void>((resolve) => {
      const timer = this.#timers.setTimeout(() => {
        socket.terminate();
        resolve();
      }, 1_000);
      socket.once("close", () => {
        this.#timers.clearTimeout(timer);
        resolve();
      });
      socket.close(1000, "session closed");
    });
  }

  async #open(): Promise<void> {
    const headers: Record<string, string> = { ...this.#options.headers };
    for (const name of Object.keys(headers)) if (name.toLowerCase() === "authorization") delete headers[name];
    if (this.#options.token) headers.Authorization = `Bearer ${this.#options.token.trim()}`;
    await openWebSocket(this.#url, {
      headers,
      onOpen: (socket) => {
        if (this.#state === "closed") socket.terminate();
        else this.#attach(socket);
      },
      WebSocket: this.#options.WebSocket,
      maxPayload: this.#options.maxPayload,
      connectTimeoutMs: this.#options.connectTimeoutMs,
      timers: this.#timers,
      secrets: this.#secrets,
    });
  }

  #attach(socket: WebSocket): void {
    this.#socket = socket;
    this.#epoch++;
    socket.on("message", (data, isBinary) => {
      if (socket !== this.#socket) return;
      this.#watchdog.received("socket");
      const text = isBinary ? "" : data.toString();
      const decoded = decodeFrame(text);
      try {
        if (decoded.kind === "frame") this.emit("frame", decoded.frame, decoded.envelope);
        else if (decoded.kind === "unknown") this.emit("unknown-frame", decoded.type);
        else this.emit("invalid-frame", decoded.error, { type: decoded.type, requestId: decoded.requestId });
      } catch (error) {
        // Never throw into ws: report it and keep the link up.
        this.emit("error", new ToolrelayError("LISTENER_FAILED", "a link frame listener threw", { cause: error }));
      }
    });
    socket.on("pong", () => {
      if (socket === this.#socket) this.#watchdog.answered("socket");
    });
    socket.on("ping", () => {
      if (socket === this.#socket) this.#watchdog.received("socket");
    });
    socket.on("close", (code, reason) => {
      if (socket !== this.#socket) return;
      this.#socket = undefined;
      this.#watchdog.stop();
      if (this.#state === "closed") return;
      const detail = redact(reason.toString(), this.#secrets);
      this.emit("error", new ToolrelayError("CONNECTION_CLOSED", `app-server socket closed (code ${code}${detail ? `: ${detail}` : ""})`));
      if (this.#options.reconnect === false) {
        this.#setState("closed");
        return;
      }
      this.#setState("reconnecting");
      this.#reconnect.schedule();
    });
    this.#watchdog.start();
  }

  #setState(state: LinkState): void {
    const previous = this.#state;
    if (previous === state) return;
    this.#state = state;
    this.emit("state", state, previous);
  }
}
