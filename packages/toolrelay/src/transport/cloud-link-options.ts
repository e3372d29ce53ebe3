import type { Timers } from "../internal/timers.js";
import type { BackoffOptions } from "./backoff.js";
import type { CloudAuthMode } from "./cloud-status-address.js";
import type { WebSocketConstructor } from "./open-web-socket.js";

/** The runtime a cloud link is attached to (camelCase: these go into the socket URLs). */
export interface CloudRuntimeAddress {
  agentId?: string | undefined;
  conversationId?: string | undefined;
}

export interface CloudLinkOptions {
  /** Environment connection id (from `GET /v1/environments`). Also the link's `connectionId`. */
  connectionId: string;
  /** Letta API key. Never written into errors, logs or close reasons. */
  apiKey: string;
  /** API base URL. Default `"https://api.letta.com"` (sockets then use `wss://api.letta.com`). */
  baseUrl?: string | undefined;
  /** Where the key goes. Default `"header"`; `"query"` puts it in the URLs (and so in logs): only for browsers. */
  auth?: CloudAuthMode | undefined;
  /** Extra upgrade headers on both sockets (e.g. `x-project-id`). An `authorization` header here is replaced. */
  headers?: Record<string, string> | undefined;
  /** The runtime to attach to. Default: none (no `agentId` / `conversationId` in the URLs, no gap `sync`). */
  runtime?: CloudRuntimeAddress | undefined;
  /** Ping interval per socket (a protocol ping and a JSON ping), in ms. Default 10_000. `0` turns the heartbeat off. */
  pingIntervalMs?: number | undefined;
  /**
   * A socket whose ping gets no answer (a protocol pong or a JSON `pong`) within this long is dead:
   * both are terminated and the link reconnects. Other inbound traffic does not count, and the
   * deadline applies from the moment the sockets open, so a dead path is found at most
   * `pingIntervalMs + pongTimeoutMs` after it died. Default 20_000; `0`: pings, no deadline.
   */
  pongTimeoutMs?: number | undefined;
  /** Reconnect after a drop. Default `true`. */
  reconnect?: boolean | undefined;
  /** Reconnect delays. Default: first retry after 25–50 ms, doubling with full jitter, capped at 5 s. */
  backoff?: BackoffOptions | undefined;
  /** Handshake deadline per socket, in ms. Default 10_000. */
  connectTimeoutMs?: number | undefined;
  /** Largest inbound frame, in bytes; a larger one closes that socket (1009) and the link reconnects. Default 16 MiB. */
  maxPayload?: number | undefined;
  /** Relay duplicate keys remembered. Default 1_000. */
  idempotencyKeyCapacity?: number | undefined;
  /** How long a missing `event_seq` may take to arrive on the other socket before it counts as lost, in ms. Default 1_000. */
  gapReorderWindowMs?: number | undefined;
  /** Gap syncs requested within this window are sent as one, in ms. Default 250. */
  syncDebounceMs?: number | undefined;
  /** Least time between two gap syncs at first, in ms. Default 5_000. */
  syncMinIntervalMs?: number | undefined;
  /** Gap syncs back off (doubling) while holes keep coming, up to this, in ms. Default 60_000. */
  syncMaxIntervalMs?: number | undefined;
  /** WebSocket class. Default `ws`. */
  WebSocket?: WebSocketConstructor | undefined;
  /** Timers (inject fake ones in tests). Default: the global timers. */
  timers?: Timers | undefined;
}

/** Counters of what the envelope rules did (for diagnostics and tests). */
export interface CloudDeliveryStats {
  acksSent: number;
  duplicatesDropped: number;
  controlStreamDeltasDropped: number;
  gapsDetected: number;
  syncsSent: number;
}
