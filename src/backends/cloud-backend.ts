import { DEFAULT_CLOUD_BASE_URL, normaliseCloudBaseUrl, type CloudAuthMode } from "../transport/cloud-status-address.js";
import { CloudLink, type CloudRuntimeAddress } from "../transport/cloud-link.js";
import type { BackoffOptions } from "../transport/backoff.js";
import type { WebSocketConstructor } from "../transport/open-web-socket.js";
import type { Timers } from "../internal/timers.js";
import { resolveCloudEnvironment, type CloudEnvironmentSelector } from "./cloud-environment.js";
import { createLettaRestClient, resolveCloudApiKey } from "./letta-rest-client.js";

/**
 * A Letta Cloud environment, reached through the cloud status relay. The
 * runtime (its `cwd`, its built-in tools) runs on the environment's machine;
 * client tools run in this process. See docs/cloud.md.
 */
export interface CloudBackendOptions {
  kind: "cloud";
  /** Letta API key. Default: env `LETTA_API_KEY`, then env `LETTA_CLOUD_API_KEY`. */
  apiKey?: string;
  /** API base URL (REST and, with `https→wss`, the status sockets). Default `"https://api.letta.com"`. */
  baseUrl?: string;
  /**
   * The environment to attach to: `{ connectionId }` is used as is; `{ name }`,
   * `{ id }` and `{ deviceId }` are looked up with `GET /v1/environments`.
   */
  environment: CloudEnvironmentSelector;
  /** Extra headers for REST calls and both status sockets (e.g. `x-project-id`). An `authorization` header is replaced by the key. */
  headers?: Record<string, string>;
  /**
   * How the key reaches the relay. Default `"header"` (`Authorization: Bearer`).
   * `"query"` puts the key in the socket URLs (`?token=`), and so in proxy and
   * server logs: use it only where headers are impossible (browsers).
   */
  auth?: CloudAuthMode;
  /** Ping interval on each status socket (a protocol-level ping and a JSON ping), in ms. Default 10_000. `0` turns the heartbeat off. */
  pingIntervalMs?: number;
  /**
   * A socket that has answered a ping once (a protocol pong or a JSON `pong`) and is then silent
   * this long after a ping counts as dead (half-open): both sockets are terminated and
   * reconnected. A socket that never answered a ping gets no deadline. Default 20_000.
   */
  pongTimeoutMs?: number;
  /** WebSocket class for the status sockets. Default `ws`. */
  WebSocket?: WebSocketConstructor;
  /** Reconnect delays. Default: first retry after 25–50 ms, doubling with full jitter, capped at 5 s. */
  backoff?: BackoffOptions;
  /** Handshake deadline per status socket, in ms. Default 10_000. */
  connectTimeoutMs?: number;
  /** Largest inbound frame, in bytes. Default 16 MiB. */
  maxPayload?: number;
  /** Retries of a failed REST request (letta-client policy). Default 2. */
  restMaxRetries?: number;
  /** Deadline of one REST request, in ms. Default 60_000. */
  restTimeoutMs?: number;
  /** Timers (inject fake ones in tests). Default: the global timers. */
  timers?: Timers;
}

/**
 * Resolve the environment of a cloud backend and build its (not yet
 * connected) {@link CloudLink}. REST errors reject with UNAUTHORIZED,
 * NOT_FOUND or REST_FAILED; a missing key with INVALID_OPTIONS.
 */
export async function createCloudLink(options: CloudBackendOptions, runtime: CloudRuntimeAddress = {}): Promise<CloudLink> {
  const apiKey = resolveCloudApiKey(options.apiKey);
  const baseUrl = normaliseCloudBaseUrl(options.baseUrl ?? DEFAULT_CLOUD_BASE_URL);
  let connectionId: string;
  if ("connectionId" in options.environment && typeof options.environment.connectionId === "string") {
    connectionId = options.environment.connectionId;
  } else {
    const client = await createLettaRestClient({
      apiKey,
      baseUrl,
      headers: options.headers,
      maxRetries: options.restMaxRetries,
      timeoutMs: options.restTimeoutMs,
    });
    connectionId = (await resolveCloudEnvironment(client, options.environment)).connectionId;
  }
  return new CloudLink({
    connectionId,
    apiKey,
    baseUrl,
    auth: options.auth,
    headers: options.headers,
    runtime,
    pingIntervalMs: options.pingIntervalMs,
    pongTimeoutMs: options.pongTimeoutMs,
    WebSocket: options.WebSocket,
    backoff: options.backoff,
    connectTimeoutMs: options.connectTimeoutMs,
    maxPayload: options.maxPayload,
    timers: options.timers,
  });
}
