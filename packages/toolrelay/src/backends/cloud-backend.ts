import { DEFAULT_CLOUD_BASE_URL, normaliseCloudBaseUrl, type CloudAuthMode } from "../transport/cloud-status-address.js";
import { CloudLink, type CloudRuntimeAddress } from "../transport/cloud-link.js";
import type { BackoffOptions } from "../transport/backoff.js";
import type { WebSocketConstructor } from "../transport/open-web-socket.js";
import { systemTimers, type Timers } from "../internal/timers.js";
import { resolveCloudEnvironment, type CloudEnvironmentSelector } from "./cloud-environment.js";
import { resolveSandboxOptions, type CloudSandboxOptions } from "./cloud-sandbox-options.js";
import { createLettaRestClient, resolveCloudApiKey } from "./letta-rest-client.js";
import { ManagedSandbox } from "./managed-sandbox.js";
import { ToolrelayError } from "../errors.js";

/**
 * A Letta Cloud environment, reached through the cloud status relay: one a listener registered
 * (`environment`), or a sandbox the SDK creates and manages (`sandbox`) — exactly one of the two.
 * The runtime (its `cwd`, its built-in tools) runs on the environment's machine; client tools
 * run in this process. See docs/cloud.md.
 */
export interface CloudBackendOptions {
  kind: "cloud";
  /** Letta API key. Default: env `LETTA_API_KEY`, then env `LETTA_CLOUD_API_KEY`. */
  apiKey?: string | undefined;
  /** API base URL (REST and, with `https→wss`, the status sockets). Default `"https://api.letta.com"`. */
  baseUrl?: string | undefined;
  /**
   * The environment to attach to: `{ connectionId }` is used as is; `{ name }`,
   * `{ id }` and `{ deviceId }` are looked up with `GET /v1/environments`.
   * Exactly one of `environment` and `sandbox`.
   */
  environment?: CloudEnvironmentSelector | undefined;
  /**
   * Create (or resume) an SDK-managed Cloud sandbox for the agent and conversation, wait until it
   * is online, keep its TTL refreshed while the session lives (every 0.8 × TTL and before each
   * turn) and terminate it on close only with `terminateOnClose`. `{}` takes every default.
   * Exactly one of `environment` and `sandbox`. See docs/cloud.md "Managed sandboxes".
   */
  sandbox?: CloudSandboxOptions | undefined;
  /** Extra headers for REST calls and both status sockets (e.g. `x-project-id`). An `authorization` header is replaced by the key. */
  headers?: Record<string, string> | undefined;
  /**
   * How the key reaches the relay. Default `"header"` (`Authorization: Bearer`).
   * `"query"` puts the key in the socket URLs (`?token=`), and so in proxy and
   * server logs: use it only where headers are impossible (browsers).
   */
  auth?: CloudAuthMode | undefined;
  /** Ping interval on each status socket (a protocol-level ping and a JSON ping), in ms. Default 10_000. `0` turns the heartbeat off. */
  pingIntervalMs?: number | undefined;
  /**
   * A status socket whose ping gets no answer (a protocol pong or a JSON `pong`) within this long
   * is dead (half-open): both sockets are terminated and reconnected. Other inbound traffic does
   * not count, and the deadline holds from the moment the sockets open, so a dead path is found at
   * most `pingIntervalMs + pongTimeoutMs` after it died. Default 20_000; `0`: pings, no deadline.
   */
  pongTimeoutMs?: number | undefined;
  /** WebSocket class for the status sockets. Default `ws`. */
  WebSocket?: WebSocketConstructor | undefined;
  /** Reconnect delays. Default: first retry after 25–50 ms, doubling with full jitter, capped at 5 s. */
  backoff?: BackoffOptions | undefined;
  /** Handshake deadline per status socket, in ms. Default 10_000. */
  connectTimeoutMs?: number | undefined;
  /** Largest inbound frame, in bytes. Default 16 MiB. */
  maxPayload?: number | undefined;
  /** Retries of a failed REST request (letta-client policy). Default 2. */
  restMaxRetries?: number | undefined;
  /** Deadline of one REST request, in ms. Default 60_000. */
  restTimeoutMs?: number | undefined;
  /** Timers (inject fake ones in tests). Default: the global timers. */
  timers?: Timers | undefined;
}

/** What a cloud backend set up: its link and, for `sandbox`, the managed sandbox. */
export interface CloudBackend {
  link: CloudLink;
  sandbox: ManagedSandbox | undefined;
}

/** Where the cloud backend runs things, besides its options. */
export interface CloudBackendContext {
  /** Aborting it stops the wait for a sandbox. */
  signal?: AbortSignal | undefined;
  /** Errors of the sandbox's background work (a failed refresh or terminate). */
  onError?(error: ToolrelayError): void;
}

/**
 * The cloud backend's environment (attached to, or created as a managed sandbox) and its (not yet
 * connected) {@link CloudLink}. Rejects as {@link createCloudLink}, and for a sandbox also with
 * SANDBOX_NOT_READY (never came online) or SANDBOX_EXPIRED (gone at once).
 */
export async function createCloudBackend(
  options: CloudBackendOptions,
  runtime: CloudRuntimeAddress = {},
  context: CloudBackendContext = {},
): Promise<CloudBackend> {
  if (options.sandbox === undefined) return { link: await createCloudLink(options, runtime), sandbox: undefined };
  const apiKey = resolveCloudApiKey(options.apiKey);
  const baseUrl = normaliseCloudBaseUrl(options.baseUrl ?? DEFAULT_CLOUD_BASE_URL);
  const client = await restClientFor(options, apiKey, baseUrl);
  const { sandbox, connectionId } = await ManagedSandbox.provision({
    client,
    options: resolveSandboxOptions(options.sandbox),
    agentId: runtime.agentId,
    conversationId: runtime.conversationId,
    timers: options.timers ?? systemTimers,
    signal: context.signal,
    onError: (error) => context.onError?.(error),
  });
  return { link: linkFor(options, apiKey, baseUrl, connectionId, runtime), sandbox };
}

/**
 * Resolve the environment of a cloud backend and build its (not yet
 * connected) {@link CloudLink}. REST errors reject with UNAUTHORIZED,
 * NOT_FOUND or REST_FAILED; a missing key with INVALID_OPTIONS.
 */
export async function createCloudLink(options: CloudBackendOptions, runtime: CloudRuntimeAddress = {}): Promise<CloudLink> {
  const apiKey = resolveCloudApiKey(options.apiKey);
  const baseUrl = normaliseCloudBaseUrl(options.baseUrl ?? DEFAULT_CLOUD_BASE_URL);
  const environment = options.environment;
  if (environment === undefined)
    throw new ToolrelayError("INVALID_OPTIONS", "backend.environment is required for createCloudLink (a sandbox needs createCloudBackend)");
  let connectionId: string;
  if ("connectionId" in environment && typeof environment.connectionId === "string") {
    connectionId = environment.connectionId;
  } else {
    const client = await restClientFor(options, apiKey, baseUrl);
    connectionId = (await resolveCloudEnvironment(client, environment)).connectionId;
  }
  return linkFor(options, apiKey, baseUrl, connectionId, runtime);
}

/** The Letta REST client of a cloud backend: its key, base URL, headers, retries and deadline. */
function restClientFor(options: CloudBackendOptions, apiKey: string, baseUrl: string): ReturnType<typeof createLettaRestClient> {
  return createLettaRestClient({
    apiKey,
    baseUrl,
    headers: options.headers,
    maxRetries: options.restMaxRetries,
    timeoutMs: options.restTimeoutMs,
  });
}

function linkFor(
  options: CloudBackendOptions,
  apiKey: string,
  baseUrl: string,
  connectionId: string,
  runtime: CloudRuntimeAddress,
): CloudLink {
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
