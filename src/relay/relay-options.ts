/**
 * Options of the reference status relay, with their defaults, and the check
 * that turns user options into a complete, validated set.
 */
import { ToolrelayError } from "../errors.js";

/** How the relay asks the listener to connect (the `supports*` flags of the register answer). */
export type ListenerMode = "single" | "split" | "paired";

/** Where the relay writes its log lines. Lines never contain frame contents or credentials. */
export interface RelayLogger {
  debug(message: string, details?: Record<string, unknown>): void;
  info(message: string, details?: Record<string, unknown>): void;
  warn(message: string, details?: Record<string, unknown>): void;
}

export interface RelayOptions {
  /** Port to listen on. Default `0` (any free port; read it from `relay.port`). */
  port?: number;
  /**
   * Address to bind. Default `"127.0.0.1"`. A non-loopback address is refused unless
   * `apiKeys` is non-empty.
   */
  host?: string;
  /**
   * Bearer API keys accepted on every route and upgrade (compared in constant time).
   * Default `[]`: no authentication, which is only allowed on a loopback bind.
   */
  apiKeys?: readonly string[];
  /**
   * Accept the key as a `token` query parameter on SDK status sockets (Letta's "query" auth
   * mode). Default `false`: such requests are refused, because a key in a URL ends up in logs.
   */
  allowQueryToken?: boolean;
  /**
   * What the register answer tells the listener to do: one socket (`"single"`), a control and
   * a stream socket (`"split"`), or split with `listener_ready` generations (`"paired"`, what
   * Letta Cloud uses). Default `"paired"`. The relay accepts any of the three on connect.
   */
  listenerMode?: ListenerMode;
  /**
   * `Host` header values (hostname, without port) accepted besides the loopback names.
   * Default: loopback names only when bound to loopback; any host when bound elsewhere.
   */
  allowedHosts?: readonly string[];
  /** Largest WebSocket message accepted on any socket, in bytes. Default 16 MiB. */
  maxPayloadBytes?: number;
  /** Largest REST request body, in bytes. Default 64 KiB. */
  maxBodyBytes?: number;
  /** Unacknowledged frames kept per SDK socket channel for redelivery. Default 1,000. */
  maxUnackedFrames?: number;
  /**
   * How long an SDK session (its seq counters and unacked frames) survives with no socket
   * attached, waiting for a reconnect. Default 60,000 ms.
   */
  sdkResumeWindowMs?: number;
  /**
   * How long an environment survives with no listener connected before it is removed (its SDK
   * sockets are then closed with 1008). Default 300,000 ms (the listener's own retry budget).
   */
  environmentGraceMs?: number;
  /** Outstanding `external_tool_call_request`s remembered per environment. Default 10,000. */
  maxOutstandingCalls?: number;
  /** Age after which an unanswered outstanding call is forgotten. Default 900,000 ms. */
  outstandingCallTtlMs?: number;
  /** Commands held per environment while its listener is reconnecting. Default 1,000. */
  maxQueuedCommands?: number;
  /**
   * Interval of WebSocket protocol pings the relay sends to every socket; a socket that did
   * not answer the previous ping is terminated. Default 30,000 ms; `0` turns it off.
   */
  heartbeatIntervalMs?: number;
  /**
   * Answer an SDK status socket's JSON `{"type":"ping"}` with `{"type":"pong"}`. Default `true`.
   * `false` plays a relay that answers only protocol-level pings (nothing documents that Letta
   * Cloud answers JSON pings on SDK sockets). Listener pings are always answered.
   */
  respondToJsonPings?: boolean;
  /**
   * Serve `POST /_relay/close-listener` and `POST /_relay/drop-sdk-sockets` (authenticated),
   * so a test can force reconnects of a relay running in another process. Default `false`.
   */
  enableTestHooks?: boolean;
  /** Log sink. Default: silent. */
  logger?: RelayLogger;
}

export interface ResolvedRelayOptions {
  port: number;
  host: string;
  apiKeys: readonly string[];
  allowQueryToken: boolean;
  listenerMode: ListenerMode;
  allowedHosts: readonly string[] | undefined;
  maxPayloadBytes: number;
  maxBodyBytes: number;
  maxUnackedFrames: number;
  sdkResumeWindowMs: number;
  environmentGraceMs: number;
  maxOutstandingCalls: number;
  outstandingCallTtlMs: number;
  maxQueuedCommands: number;
  heartbeatIntervalMs: number;
  respondToJsonPings: boolean;
  enableTestHooks: boolean;
  logger: RelayLogger;
}

const noop = (): void => {};
/** A logger that writes nothing. */
export const silentRelayLogger: RelayLogger = { debug: noop, info: noop, warn: noop };

/** Whether `host` names the loopback interface. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return bare === "localhost" || bare === "::1" || /^127(\.\d{1,3}){3}$/.test(bare);
}

function invalid(message: string): ToolrelayError {
  return new ToolrelayError("INVALID_OPTIONS", `relay: ${message}`);
}

function count(name: string, value: number | undefined, fallback: number, minimum: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < minimum) throw invalid(`${name} must be an integer >= ${minimum}`);
  return value;
}

export function resolveRelayOptions(options: RelayOptions = {}): ResolvedRelayOptions {
  const host = options.host ?? "127.0.0.1";
  const apiKeys = [...(options.apiKeys ?? [])];
  for (const key of apiKeys) {
    if (typeof key !== "string" || key.length === 0 || /\s/.test(key)) {
      throw invalid("every API key must be a non-empty string without whitespace");
    }
  }
  if (!isLoopbackHost(host) && apiKeys.length === 0) {
    throw invalid(`refusing to bind non-loopback host ${host} without apiKeys`);
  }
  const listenerMode = options.listenerMode ?? "paired";
  if (!["single", "split", "paired"].includes(listenerMode)) {
    throw invalid(`listenerMode must be "single", "split" or "paired"`);
  }
  const port = count("port", options.port, 0, 0);
  if (port > 65_535) throw invalid("port must be <= 65535");
  return {
    port,
    host,
    apiKeys,
    allowQueryToken: options.allowQueryToken ?? false,
    listenerMode,
    allowedHosts: options.allowedHosts?.map((name) => name.toLowerCase()),
    maxPayloadBytes: count("maxPayloadBytes", options.maxPayloadBytes, 16 * 1024 * 1024, 1024),
    maxBodyBytes: count("maxBodyBytes", options.maxBodyBytes, 64 * 1024, 256),
    maxUnackedFrames: count("maxUnackedFrames", options.maxUnackedFrames, 1_000, 1),
    sdkResumeWindowMs: count("sdkResumeWindowMs", options.sdkResumeWindowMs, 60_000, 0),
    environmentGraceMs: count("environmentGraceMs", options.environmentGraceMs, 300_000, 0),
    maxOutstandingCalls: count("maxOutstandingCalls", options.maxOutstandingCalls, 10_000, 1),
    outstandingCallTtlMs: count("outstandingCallTtlMs", options.outstandingCallTtlMs, 900_000, 1),
    maxQueuedCommands: count("maxQueuedCommands", options.maxQueuedCommands, 1_000, 1),
    heartbeatIntervalMs: count("heartbeatIntervalMs", options.heartbeatIntervalMs, 30_000, 0),
    respondToJsonPings: options.respondToJsonPings ?? true,
    enableTestHooks: options.enableTestHooks ?? false,
    logger: options.logger ?? silentRelayLogger,
  };
}
