import { randomBytes } from "node:crypto";
import { ToolrelayError } from "../errors.js";
import { systemTimers, type Timers } from "../internal/timers.js";
import type { BackoffOptions } from "./backoff.js";
import { secretForms, upgradeHeaders, type WebSocketConstructor } from "./open-web-socket.js";
import { SocketLink } from "./socket-link.js";

/** The local app-server socket's options (every one of them is an option of the local backend, `url` aside). */
export interface LocalLinkOptions {
  /** App-server WebSocket URL, e.g. `ws://127.0.0.1:4500/ws`. `http(s):` is mapped to `ws(s):`; an empty path becomes `/ws`. */
  url: string;
  /** Sent as `Authorization: Bearer <token>` (never in the URL). Default: no auth header. */
  token?: string | undefined;
  /** Extra upgrade headers. */
  headers?: Record<string, string> | undefined;
  /** Reconnect after a drop. Default `true`. */
  reconnect?: boolean | undefined;
  /** Reconnect delays. Default: first retry after ~50 ms, doubling with jitter, capped at 5 s. */
  backoff?: BackoffOptions | undefined;
  /** Handshake deadline per attempt, in ms. Default 10_000. */
  connectTimeoutMs?: number | undefined;
  /**
   * Protocol-level ping interval, in ms. Default 30_000 (the app-server's own). `0` disables the
   * heartbeat. Any inbound traffic (a frame, a pong, the server's own pings) counts as liveness.
   */
  pingIntervalMs?: number | undefined;
  /**
   * A link silent this long after a ping is dead: it is terminated and reconnected. Default
   * twice `pingIntervalMs` (60_000), so a half-open link is detected within 90 s of its last
   * traffic — no tighter than the app-server, which reaps a socket after 90 s without a pong.
   * `0`: pings, no deadline.
   */
  pongTimeoutMs?: number | undefined;
  /** Largest inbound frame, in bytes. Default 16 MiB. */
  maxPayload?: number | undefined;
  /** WebSocket class. Default `ws`. */
  WebSocket?: WebSocketConstructor | undefined;
  /** Timers (inject fake ones in tests). Default: the global timers. */
  timers?: Timers | undefined;
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

/** The one socket of a local link (also its name in error texts: "the app-server socket closed"). */
type AppServerChannel = "app-server";

/**
 * The link to a local Letta Code app-server: one WebSocket, on the shared {@link SocketLink}. The
 * app-server treats each socket as a new controller, so after a reconnect the session registers its
 * tools again; pending calls of the old socket are gone on the runtime's side
 * (`keepsPendingCallsAcrossReconnect` is `false`). Its heartbeat is protocol pings, and any traffic
 * is proof of life; it adds no delivery rules.
 */
export class LocalLink extends SocketLink<AppServerChannel> {
  #url: string;

  constructor(options: LocalLinkOptions) {
    if (options.token !== undefined && options.token.trim() === "") {
      throw new ToolrelayError("INVALID_OPTIONS", "backend.token is empty; omit it for a server without auth");
    }
    const url = normaliseAppServerUrl(options.url);
    const token = options.token?.trim();
    const address = new URL(url);
    const pingIntervalMs = options.pingIntervalMs ?? DEFAULT_LOCAL_PING_INTERVAL_MS;
    super({
      name: "local",
      connectionId: `local:${address.host}${address.pathname}#${randomBytes(4).toString("hex")}`,
      keepsPendingCallsAcrossReconnect: false,
      channels: ["app-server"],
      address: () => ({ urls: { "app-server": url }, headers: upgradeHeaders(options.headers, token) }),
      secrets: token ? secretForms(token) : [],
      WebSocket: options.WebSocket,
      maxPayload: options.maxPayload,
      connectTimeoutMs: options.connectTimeoutMs,
      timers: options.timers ?? systemTimers,
      reconnect: options.reconnect !== false,
      backoff: options.backoff,
      fatal: ["UNAUTHORIZED"],
      // A `ws` server (the app-server is one) answers every protocol ping.
      heartbeat: { pingIntervalMs, pongTimeoutMs: options.pongTimeoutMs ?? 2 * pingIntervalMs, proof: "traffic", jsonPing: false },
    });
    this.#url = url;
  }

  /** The normalised URL (no credentials ever appear in it). */
  get url(): string {
    return this.#url;
  }
}
