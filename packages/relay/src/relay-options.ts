/**
 * Options of the reference status relay, with their defaults. Every bound the relay enforces is
 * one of these options; {@link resolveRelayOptions} (resolve-relay-options.ts) checks them.
 * See docs/relay.md "Bounds".
 */
import type { Timers } from "toolrelay/protocol";
import type { RelayClusterOptions, ResolvedClusterOptions } from "./cluster/cluster-options.js";
import type { RelayKey, TenantKeys } from "./relay-keys.js";
import type { RelaySandboxOptions, ResolvedSandboxOptions } from "./sandbox-options.js";

/** How the relay asks the listener to connect (the `supports*` flags of the register answer). */
export type ListenerMode = "single" | "split" | "paired";

/** Where the relay writes its log lines. Lines never contain frame contents or credentials. */
export interface RelayLogger {
  /** Per-frame and per-socket detail (`--debug`). */
  debug(message: string, details?: Record<string, unknown>): void;
  /** Lifecycle: listening, environments registered and removed (`--verbose`). */
  info(message: string, details?: Record<string, unknown>): void;
  /** Refusals and bounds hit; always written. */
  warn(message: string, details?: Record<string, unknown>): void;
}

/** The options of `startRelay` (and of the `toolrelay-relay` CLI's flags); every one has a default. */
export interface RelayOptions {
  /** Port to listen on. Default `0` (any free port; read it from `relay.port`). */
  port?: number | undefined;
  /**
   * Address to bind. Default `"127.0.0.1"`. A non-loopback address is refused unless API keys
   * are configured (`apiKeys` or `tenants`).
   */
  host?: string | undefined;
  /**
   * Bearer API keys accepted on every route and upgrade (compared in constant time). Each key
   * listed here is a tenant of its own (named `key-1`, `key-2`, … by position) unless `tenants`
   * names it, and has both roles (listener and sdk: one key, one party). Default `[]`. With no
   * keys at all there is one tenant, `default`, and no authentication — only allowed on a
   * loopback bind.
   */
  apiKeys?: readonly string[] | undefined;
  /**
   * Tenant name → its API keys: `{ listener: [...], sdk: [...] }` (docs/relay.md "Key roles"),
   * or a bare list, whose keys have both roles each. Keys of one tenant share its environments;
   * only a `listener` key may register environments and open listener sockets, only an `sdk`
   * key may list environments, open SDK status sockets and manage sandboxes. Keys of different
   * tenants share nothing; a key may belong to one tenant only. Default `{}`. Names: 1–64
   * characters of `[A-Za-z0-9._-]`. A tenant where a key of both roles sits beside other keys
   * is named in a warning at start: any of those keys could act as its listener.
   */
  tenants?: Readonly<Record<string, readonly string[] | TenantKeys>> | undefined;
  /**
   * Accept the key as a `token` query parameter on SDK status sockets (Letta's "query" auth
   * mode). Default `false`: such requests are refused, because a key in a URL ends up in logs.
   */
  allowQueryToken?: boolean | undefined;
  /**
   * What the register answer tells the listener to do: one socket (`"single"`), a control and
   * a stream socket (`"split"`), or split with `listener_ready` generations (`"paired"`, what
   * Letta Cloud uses). Default `"paired"`. The relay accepts any of the three on connect.
   */
  listenerMode?: ListenerMode | undefined;
  /**
   * `Host` header values (hostname, without port) accepted besides the loopback names.
   * Default: loopback names only when bound to loopback; any host when bound elsewhere.
   */
  allowedHosts?: readonly string[] | undefined;
  /** Largest WebSocket message accepted on an SDK status socket, in bytes (larger: close 1009). Default 16 MiB. */
  maxSdkFrameBytes?: number | undefined;
  /** Largest WebSocket message accepted on a listener socket, in bytes (larger: close 1009). Default 16 MiB. */
  maxListenerFrameBytes?: number | undefined;
  /** Largest REST request body, in bytes (larger: 413). Default 64 KiB. */
  maxBodyBytes?: number | undefined;
  /**
   * Bytes of unacknowledged frames one SDK session may hold (both channels, attached or
   * waiting for a resume). A delivery past it closes the session with 4008; one frame alone
   * always fits. Default 8 MiB.
   */
  maxUnackedBytes?: number | undefined;
  /**
   * Bytes of unacknowledged frames all SDK sessions of one tenant may hold together; past it
   * the tenant's session holding the most is closed with 4008. Default 64 MiB.
   */
  maxUnackedBytesPerTenant?: number | undefined;
  /**
   * How long an SDK session (its seq counters, unacked frames and bindings) survives with no
   * socket attached, waiting for a reconnect. Default 60,000 ms.
   */
  sdkResumeWindowMs?: number | undefined;
  /**
   * How long an environment survives with no listener connected before it is removed (its SDK
   * sockets are then closed with 1008). Default 300,000 ms (the listener's own retry budget).
   */
  environmentGraceMs?: number | undefined;
  /** Environments one tenant may have registered at once (more: 429). Default 64. */
  maxEnvironmentsPerTenant?: number | undefined;
  /** SDK sessions (attached or waiting for a resume) one tenant may have at once (more: 429 on upgrade). Default 256. */
  maxSessionsPerTenant?: number | undefined;
  /**
   * Unanswered `external_tool_call_request`s one tenant's environments may hold together; a
   * request past it is answered to the listener with an error at once. Default 1,000.
   */
  maxOutstandingCallsPerTenant?: number | undefined;
  /**
   * How long a tool call waits for an SDK session bound to its runtime; then the listener gets
   * an `external_tool_call_response` with an error and the call is forgotten. Default 30,000 ms.
   */
  unownedCallTimeoutMs?: number | undefined;
  /** Age after which an outstanding call that was handed to a session but never answered is forgotten. Default 900,000 ms. */
  outstandingCallTtlMs?: number | undefined;
  /** Commands held per environment while its listener is reconnecting. Default 1,000. */
  maxQueuedCommands?: number | undefined;
  /**
   * Bytes of commands held per environment while its listener is reconnecting; past it (or
   * `maxQueuedCommands`) a command is refused (tool answers are always kept). Default 16 MiB.
   */
  maxQueuedCommandBytes?: number | undefined;
  /**
   * Bytes written to a listener socket and not yet taken by the kernel; past it the relay stops
   * reading the environment's SDK sockets until half of it has drained. Default 16 MiB.
   */
  maxListenerBufferedBytes?: number | undefined;
  /**
   * How long a TCP connection may take to finish its HTTP request or WebSocket upgrade before
   * the relay closes it. Default 5,000 ms.
   */
  handshakeTimeoutMs?: number | undefined;
  /**
   * Open TCP connections in total. When full, a new connection replaces the oldest one still
   * in its handshake, or is refused if there is none. Default 4,096. At start it is checked
   * against the process's open-file limit (Linux: `/proc/self/limits`) with room for the
   * relay's other descriptors: a value given here that does not fit is refused
   * (`INVALID_OPTIONS`, naming both numbers); the default that does not fit is lowered to what
   * fits, with a warning (docs/relay.md "Connections and the open-file limit").
   */
  maxConnections?: number | undefined;
  /** Open TCP connections from one remote address (more: refused with 503 at once). Default 256. */
  maxConnectionsPerAddress?: number | undefined;
  /**
   * Interval of WebSocket protocol pings the relay sends to every socket; a socket that did
   * not answer the previous ping is terminated. Default 30,000 ms; `0` turns it off.
   */
  heartbeatIntervalMs?: number | undefined;
  /**
   * Answer an SDK status socket's JSON `{"type":"ping"}` with `{"type":"pong"}` on the same
   * socket. Default `true`. (The listener's JSON pings are always answered: it reconnects
   * after three missed pongs.)
   */
  respondToJsonPings?: boolean | undefined;
  /**
   * Serve `POST /_relay/close-listener`, `POST /_relay/drop-sdk-sockets`, `GET /_relay/environments`
   * and `GET /_relay/stats` (authenticated, scoped to the caller's tenant), so a test can force
   * reconnects of a relay running in another process. Default `false`.
   */
  enableTestHooks?: boolean | undefined;
  /**
   * Provision SDK-managed sandboxes (`POST /v1/agents/{agentId}/sandboxes`, `POST /v1/sandboxes`
   * and their refresh / terminate routes): each one a real listener process started with this
   * command in its own directory. Default: none (the sandbox routes answer 501).
   */
  sandbox?: RelaySandboxOptions | undefined;
  /** Sandboxes one tenant may have at once (more: 429). Default 8. */
  maxSandboxesPerTenant?: number | undefined;
  /**
   * Run as one node of a cluster that shares environments, leases and outstanding tool calls in
   * NATS JetStream (docs/relay-cluster.md). Every node must have the same keys and bounds. Not
   * with `sandbox`. Default: none (a single relay holding everything in memory).
   */
  cluster?: RelayClusterOptions | undefined;
  /** Log sink. Default: silent. */
  logger?: RelayLogger | undefined;
  /** Timers (inject fake ones in tests). Default: the global timers. */
  timers?: Timers | undefined;
}

/** {@link RelayOptions} with every default applied and the keys indexed by tenant (what the relay runs with). */
export interface ResolvedRelayOptions {
  port: number;
  host: string;
  /** Key → its tenant and roles (from `apiKeys` and `tenants`). Empty: no authentication. */
  keys: ReadonlyMap<string, RelayKey>;
  allowQueryToken: boolean;
  listenerMode: ListenerMode;
  allowedHosts: readonly string[] | undefined;
  maxSdkFrameBytes: number;
  maxListenerFrameBytes: number;
  maxBodyBytes: number;
  maxUnackedBytes: number;
  maxUnackedBytesPerTenant: number;
  sdkResumeWindowMs: number;
  environmentGraceMs: number;
  maxEnvironmentsPerTenant: number;
  maxSessionsPerTenant: number;
  maxOutstandingCallsPerTenant: number;
  unownedCallTimeoutMs: number;
  outstandingCallTtlMs: number;
  maxQueuedCommands: number;
  maxQueuedCommandBytes: number;
  maxListenerBufferedBytes: number;
  handshakeTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerAddress: number;
  heartbeatIntervalMs: number;
  respondToJsonPings: boolean;
  enableTestHooks: boolean;
  sandbox: ResolvedSandboxOptions | undefined;
  maxSandboxesPerTenant: number;
  cluster: ResolvedClusterOptions | undefined;
  logger: RelayLogger;
  timers: Timers;
}

const noop = (): void => {};
/** A logger that writes nothing. */
export const silentRelayLogger: RelayLogger = { debug: noop, info: noop, warn: noop };
