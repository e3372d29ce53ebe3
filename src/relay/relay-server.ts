/**
 * `startRelay(options)`: the reference status relay as a running HTTP + WebSocket server.
 * Routes: `POST /v1/environments/register`, `GET /v1/environments`, the listener socket at the
 * registered `wsUrl`, the SDK status sockets at `/v1/environments/{connectionId}/status/ws`,
 * `GET /healthz`, and (opt-in) the `/_relay/*` test hooks. See docs/relay.md.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { EventEmitter } from "eventemitter3";
import { WebSocket, WebSocketServer } from "ws";
import { ToolrelayError } from "../errors.js";
import { ListenerRegistry, parseRegistration } from "./listener-registry.js";
import { ApiKeyChecker, authenticate, checkRequestOrigin } from "./relay-auth.js";
import type { RelayEmit, RelayEnvironmentInfo, RelayEvents } from "./relay-events.js";
import { closeReason, isSendableCloseCode, readJsonBody, refuseUpgrade, sendError, sendJson } from "./relay-http.js";
import { resolveRelayOptions, type RelayOptions, type ResolvedRelayOptions } from "./relay-options.js";
import { upgradeKind, upgradeListener, upgradeSdk, type UpgradeContext } from "./relay-upgrade.js";

/** Options of {@link Relay.dropSdkSockets}. */
export interface DropSdkSocketsOptions {
  /** Close code. Default 1012 ("service restart"). */
  code?: number;
  /** Close reason. Default "Relay dropped the status socket". */
  reason?: string;
  /** Cut the TCP connection without a close frame (like a network failure). Default false. */
  terminate?: boolean;
}

/** A running relay. */
export interface Relay extends EventEmitter<RelayEvents> {
  /** WebSocket base, `ws://127.0.0.1:PORT`. */
  readonly url: string;
  /** HTTP base, `http://127.0.0.1:PORT`: the listener's `LETTA_BASE_URL` and the SDK's API base URL. */
  readonly httpUrl: string;
  readonly port: number;
  readonly host: string;
  /** Every registered environment. */
  environments(): RelayEnvironmentInfo[];
  /** One environment by connection id. */
  environment(connectionId: string): RelayEnvironmentInfo | undefined;
  /** The SDK status socket URL for an environment (no credentials in it). */
  statusUrl(connectionId: string, query: { channel: "control" | "stream"; agentId?: string; conversationId?: string; sessionId?: string }): string;
  /**
   * Closes the environment's listener sockets with `code` (default 1012: the listener reconnects).
   * 1008 removes the environment (its SDK sockets are closed with 1008; the listener registers
   * again and gets a new connection id). Returns false if there was nothing to close.
   */
  closeListener(connectionId: string, code?: number, reason?: string): boolean;
  /** Closes the SDK status sockets of one environment (or all); sessions wait for a reconnect. Returns how many. */
  dropSdkSockets(connectionId?: string, options?: DropSdkSocketsOptions): number;
  /** Stops the relay: listener and SDK sockets closed with 1001, server closed. Idempotent. */
  close(): Promise<void>;
}

class RelayServer extends EventEmitter<RelayEvents> implements Relay {
  readonly url: string;
  readonly httpUrl: string;
  readonly port: number;
  readonly host: string;
  private closing: Promise<void> | undefined;
  private readonly alive = new WeakMap<WebSocket, boolean>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly server: Server,
    private readonly sockets: WebSocketServer,
    readonly registry: ListenerRegistry,
    private readonly options: ResolvedRelayOptions,
  ) {
    super();
    const address = server.address() as AddressInfo;
    this.port = address.port;
    this.host = options.host;
    const hostPart = options.host.includes(":") && !options.host.startsWith("[") ? `[${options.host}]` : options.host;
    this.url = `ws://${hostPart}:${this.port}`;
    this.httpUrl = `http://${hostPart}:${this.port}`;
    this.timer = setInterval(() => this.tick(), options.heartbeatIntervalMs || 60_000);
    this.timer.unref();
  }

  track(socket: WebSocket): void {
    this.alive.set(socket, true);
    socket.on("pong", () => this.alive.set(socket, true));
  }

  private tick(): void {
    this.registry.sweep();
    if (this.options.heartbeatIntervalMs === 0) return;
    for (const socket of this.sockets.clients) {
      if (this.alive.get(socket) === false) {
        socket.terminate();
        continue;
      }
      this.alive.set(socket, false);
      socket.ping();
    }
  }

  environments(): RelayEnvironmentInfo[] {
    return this.registry.list().map((environment) => environment.info());
  }

  environment(connectionId: string): RelayEnvironmentInfo | undefined {
    return this.registry.get(connectionId)?.info();
  }

  statusUrl(connectionId: string, query: { channel: "control" | "stream"; agentId?: string; conversationId?: string; sessionId?: string }): string {
    const url = new URL(`${this.url}/v1/environments/${encodeURIComponent(connectionId)}/status/ws`);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, value);
    return url.toString();
  }

  closeListener(connectionId: string, code = 1012, reason = "Relay closed the listener connection"): boolean {
    const environment = this.registry.get(connectionId);
    if (!environment) return false;
    if (!isSendableCloseCode(code)) throw new ToolrelayError("INVALID_OPTIONS", `relay: ${code} is not a sendable close code`);
    if (code === 1008) {
      this.registry.remove(environment, 1008, 1008, closeReason(reason));
      return true;
    }
    return environment.listener.close(code, closeReason(reason));
  }

  dropSdkSockets(connectionId?: string, options: DropSdkSocketsOptions = {}): number {
    const code = options.code ?? 1012;
    if (!isSendableCloseCode(code)) throw new ToolrelayError("INVALID_OPTIONS", `relay: ${code} is not a sendable close code`);
    const environments = connectionId === undefined ? this.registry.list() : [this.registry.get(connectionId)].filter((e) => e !== undefined);
    let count = 0;
    for (const environment of environments) {
      if (options.terminate) count += environment.terminateSdkSockets();
      else count += environment.dropSdkSockets(code, closeReason(options.reason ?? "Relay dropped the status socket"));
    }
    return count;
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    clearInterval(this.timer);
    this.registry.removeAll("Relay shutting down");
    const deadline = Date.now() + 1_000;
    while (this.sockets.clients.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    for (const socket of this.sockets.clients) socket.terminate();
    await new Promise<void>((resolve) => this.sockets.close(() => resolve()));
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.options.logger.info("relay: stopped");
  }

  /** HTTP routes. */
  async handleRequest(request: IncomingMessage, response: ServerResponse, checker: ApiKeyChecker): Promise<void> {
    const url = new URL(request.url ?? "/", "http://relay.invalid");
    this.options.logger.debug("relay: http request", { method: request.method, path: url.pathname });
    const refused = checkRequestOrigin(request, { bindHost: this.options.host, allowedHosts: this.options.allowedHosts });
    if (refused) return sendError(response, refused.status, refused.message);
    if (url.pathname === "/healthz" && request.method === "GET") return sendJson(response, 200, { ok: true });
    const denied = authenticate(request, url, checker, { allowQueryToken: false });
    if (denied) return sendError(response, denied.status, denied.message);
    if (url.pathname === "/v1/environments/register") {
      if (request.method !== "POST") return sendError(response, 405, "use POST");
      const body = await readJsonBody(request, this.options.maxBodyBytes);
      if (!body.ok) return sendError(response, body.status, body.message);
      const registration = parseRegistration(body.value);
      if (typeof registration === "string") return sendError(response, 400, registration);
      const { answer } = this.registry.register(registration, `ws://${request.headers.host}`);
      return sendJson(response, 200, answer);
    }
    if (url.pathname === "/v1/environments" && request.method === "GET") {
      // Cloud's shape: an environment whose listener is not connected has no connectionId, and
      // connectedAt is epoch ms (or null).
      const connections = this.registry.list().map(({ identity, listener }) => ({
        id: identity.id,
        connectionId: listener.ready ? identity.connectionId : null,
        deviceId: identity.deviceId,
        connectionName: identity.connectionName,
        connectedAt: listener.ready ? (listener.connectedAt?.getTime() ?? null) : null,
      }));
      return sendJson(response, 200, { connections, hasNextPage: false });
    }
    if (this.options.enableTestHooks && url.pathname.startsWith("/_relay/")) return this.handleTestHook(request, response, url);
    return sendError(response, 404, "no such route");
  }

  private async handleTestHook(request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> {
    if (url.pathname === "/_relay/environments" && request.method === "GET") return sendJson(response, 200, this.environments());
    if (request.method !== "POST") return sendError(response, 405, "use POST");
    const body = await readJsonBody(request, this.options.maxBodyBytes);
    if (!body.ok) return sendError(response, body.status, body.message);
    const input = (typeof body.value === "object" && body.value !== null ? body.value : {}) as Record<string, unknown>;
    const code = typeof input.code === "number" ? input.code : undefined;
    const reason = typeof input.reason === "string" ? input.reason : undefined;
    if (code !== undefined && !isSendableCloseCode(code)) return sendError(response, 400, "code is not a sendable close code");
    const connectionId = typeof input.connectionId === "string" ? input.connectionId : undefined;
    if (url.pathname === "/_relay/close-listener") {
      if (!connectionId) return sendError(response, 400, "connectionId is required");
      return sendJson(response, 200, { closed: this.closeListener(connectionId, code, reason) });
    }
    if (url.pathname === "/_relay/drop-sdk-sockets") {
      const dropped = this.dropSdkSockets(connectionId, { code, reason, terminate: input.terminate === true });
      return sendJson(response, 200, { dropped });
    }
    return sendError(response, 404, "no such test hook");
  }

  /** WebSocket upgrades. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, checker: ApiKeyChecker): void {
    if (this.closing) return refuseUpgrade(socket, 503, "relay is shutting down");
    const url = new URL(request.url ?? "/", "http://relay.invalid");
    const refused = checkRequestOrigin(request, { bindHost: this.options.host, allowedHosts: this.options.allowedHosts });
    if (refused) return refuseUpgrade(socket, refused.status, refused.message);
    const target = upgradeKind(url.pathname);
    if (!target) return refuseUpgrade(socket, 404, "no such WebSocket endpoint");
    const allowQueryToken = target.kind === "sdk" && this.options.allowQueryToken;
    const denied = authenticate(request, url, checker, { allowQueryToken });
    if (denied) return refuseUpgrade(socket, denied.status, denied.message);
    const context: UpgradeContext = { options: this.options, registry: this.registry, server: this.sockets, track: (s) => this.track(s) };
    if (target.kind === "sdk") upgradeSdk(context, request, socket, head, url, target.connectionId);
    else upgradeListener(context, request, socket, head, url, target.connectionId);
  }
}

/** Starts a relay and resolves once it listens. Throws INVALID_OPTIONS for bad options (e.g. a public bind without keys). */
export async function startRelay(options: RelayOptions = {}): Promise<Relay> {
  const resolved = resolveRelayOptions(options);
  const checker = new ApiKeyChecker(resolved.apiKeys);
  const sockets = new WebSocketServer({ noServer: true, maxPayload: resolved.maxPayloadBytes, perMessageDeflate: false });
  const server = createServer();
  let relay: RelayServer | undefined;
  const emit: RelayEmit = (event, ...args) => {
    (relay?.emit as ((name: string, ...rest: unknown[]) => boolean) | undefined)?.call(relay, event, ...args);
  };
  const registry = new ListenerRegistry(resolved, emit);
  server.on("request", (request, response) => {
    relay?.handleRequest(request, response, checker).catch(() => {
      if (!response.headersSent) sendError(response, 500, "internal error");
      else response.destroy();
    });
  });
  server.on("upgrade", (request, socket, head) => {
    if (!relay) return refuseUpgrade(socket, 503, "relay is starting");
    relay.handleUpgrade(request, socket, head, checker);
  });
  server.on("clientError", (_error, socket) => socket.destroy());
  sockets.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) =>
      reject(new ToolrelayError("INVALID_OPTIONS", `relay: cannot listen on ${resolved.host}:${resolved.port}`, { cause: error })),
    );
    server.listen(resolved.port, resolved.host, () => resolve());
  });
  relay = new RelayServer(server, sockets, registry, resolved);
  resolved.logger.info("relay: listening", { url: relay.httpUrl, listenerMode: resolved.listenerMode });
  return relay;
}
