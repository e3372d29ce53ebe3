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
import { type WebSocket, WebSocketServer } from "ws";
import { ToolrelayError } from "../errors.js";
import { unrefTimer, type TimerHandle } from "../internal/timers.js";
import { ConnectionGuard, type ConnectionStats } from "./connection-guard.js";
import { FairScheduler } from "./fair-scheduler.js";
import { ListenerRegistry } from "./listener-registry.js";
import { RELAY_CLOSE } from "./relay-close-codes.js";
import { authenticate, checkRequestOrigin } from "./relay-auth.js";
import type { RelayEmit, RelayEnvironmentInfo, RelayEvents, RelaySandboxInfo } from "./relay-events.js";
import { closeReason, isSendableCloseCode, refuseUpgrade, sendError } from "./relay-http.js";
import { handleRelayRequest } from "./relay-routes.js";
import type { RelayOptions, ResolvedRelayOptions } from "./relay-options.js";
import { upgradeKind, upgradeListener, upgradeSdk, type UpgradeContext } from "./relay-upgrade.js";
import { resolveRelayOptions } from "./resolve-relay-options.js";
import { SandboxRegistry } from "./sandbox-registry.js";
import { TenantDirectory, type Principal } from "./tenant-directory.js";
import type { TenantUsage } from "./tenant.js";

/** Options of {@link Relay.dropSdkSockets}. */
export interface DropSdkSocketsOptions {
  /** Close code. Default 1012 ("service restart"). */
  code?: number;
  /** Close reason. Default "Relay dropped the status socket". */
  reason?: string;
  /** Cut the TCP connection without a close frame (like a network failure). Default false. */
  terminate?: boolean;
}

/** What the relay holds right now (`relay.stats()`, and the `/_relay/stats` hook for one tenant). */
export interface RelayStats {
  connections: ConnectionStats;
  tenants: TenantUsage[];
}

/** A running relay. */
export interface Relay extends EventEmitter<RelayEvents> {
  /** WebSocket base, `ws://127.0.0.1:PORT`. */
  readonly url: string;
  /** HTTP base, `http://127.0.0.1:PORT`: the listener's `LETTA_BASE_URL` and the SDK's API base URL. */
  readonly httpUrl: string;
  readonly port: number;
  readonly host: string;
  /** Every registered environment, of every tenant (the operator's view). */
  environments(): RelayEnvironmentInfo[];
  /** One environment by connection id. */
  environment(connectionId: string): RelayEnvironmentInfo | undefined;
  /** Every live sandbox, of every tenant (empty when the relay provisions none). */
  sandboxes(): RelaySandboxInfo[];
  /** Connections and, per tenant, what it holds against its caps. */
  stats(): RelayStats;
  /** The SDK status socket URL for an environment (no credentials in it). */
  statusUrl(
    connectionId: string,
    query: { channel: "control" | "stream"; agentId?: string; conversationId?: string; sessionId?: string },
  ): string;
  /**
   * Closes the environment's listener sockets with `code` (default 1012: the listener reconnects).
   * 1008 removes the environment (its SDK sockets are closed with 1008; the listener registers
   * again and gets a new connection id). Returns false if there was nothing to close.
   */
  closeListener(connectionId: string, code?: number, reason?: string): boolean;
  /** Closes the SDK status sockets of one environment (or all); sessions wait for a reconnect. Returns how many. */
  dropSdkSockets(connectionId?: string, options?: DropSdkSocketsOptions): number;
  /** Stops the relay: every sandbox reaped, listener and SDK sockets closed with 1001, server closed. Idempotent. */
  close(): Promise<void>;
}

interface RelayParts {
  server: Server;
  servers: { sdk: WebSocketServer; listener: WebSocketServer };
  registry: ListenerRegistry;
  directory: TenantDirectory;
  sandboxes: SandboxRegistry | undefined;
  guard: ConnectionGuard;
  options: ResolvedRelayOptions;
  emit: RelayEmit;
}

class RelayServer extends EventEmitter<RelayEvents> implements Relay {
  readonly url: string;
  readonly httpUrl: string;
  readonly port: number;
  readonly host: string;
  #parts: RelayParts;
  #closing: Promise<void> | undefined;
  #alive = new WeakMap<WebSocket, boolean>();
  #timer: TimerHandle | undefined;

  constructor(parts: RelayParts) {
    super();
    this.#parts = parts;
    const { options } = parts;
    const address = parts.server.address() as AddressInfo;
    this.port = address.port;
    this.host = options.host;
    const hostPart = options.host.includes(":") && !options.host.startsWith("[") ? `[${options.host}]` : options.host;
    this.url = `ws://${hostPart}:${this.port}`;
    this.httpUrl = `http://${hostPart}:${this.port}`;
    this.#scheduleTick();
  }

  #scheduleTick(): void {
    const { timers, heartbeatIntervalMs } = this.#parts.options;
    this.#timer = timers.setTimeout(() => {
      this.#tick();
      if (!this.#closing) this.#scheduleTick();
    }, heartbeatIntervalMs || 60_000);
    unrefTimer(this.#timer);
  }

  /** A socket was accepted on either endpoint: heartbeat bookkeeping, and no handshake deadline any more. */
  accepted(socket: WebSocket, raw: Duplex): void {
    this.#parts.guard.established(raw);
    this.#alive.set(socket, true);
    socket.on("pong", () => this.#alive.set(socket, true));
  }

  #tick(): void {
    this.#parts.registry.sweep();
    if (this.#parts.options.heartbeatIntervalMs === 0) return;
    for (const server of Object.values(this.#parts.servers)) {
      for (const socket of server.clients) {
        if (this.#alive.get(socket) === false) {
          socket.terminate();
          continue;
        }
        this.#alive.set(socket, false);
        socket.ping();
      }
    }
  }

  environments(): RelayEnvironmentInfo[] {
    return this.#parts.registry.list().map((environment) => environment.info());
  }

  environment(connectionId: string): RelayEnvironmentInfo | undefined {
    return this.#parts.registry.get(connectionId)?.info();
  }

  sandboxes(): RelaySandboxInfo[] {
    return this.#parts.sandboxes?.list() ?? [];
  }

  stats(): RelayStats {
    return { connections: this.#parts.guard.stats(), tenants: this.#parts.directory.tenants().map((tenant) => tenant.usage()) };
  }

  statusUrl(
    connectionId: string,
    query: { channel: "control" | "stream"; agentId?: string; conversationId?: string; sessionId?: string },
  ): string {
    const url = new URL(`${this.url}/v1/environments/${encodeURIComponent(connectionId)}/status/ws`);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, value);
    return url.toString();
  }

  closeListener(connectionId: string, code = 1012, reason = "Relay closed the listener connection"): boolean {
    const environment = this.#parts.registry.get(connectionId);
    if (!environment) return false;
    if (!isSendableCloseCode(code)) throw new ToolrelayError("INVALID_OPTIONS", `relay: ${code} is not a sendable close code`);
    if (code === RELAY_CLOSE.environmentGone.code) {
      this.#parts.registry.remove(environment, code, code, closeReason(reason));
      return true;
    }
    return environment.listener.close(code, closeReason(reason));
  }

  dropSdkSockets(connectionId?: string, options: DropSdkSocketsOptions = {}): number {
    return this.#dropSdkSockets(undefined, connectionId, options);
  }

  #dropSdkSockets(principal: Principal | undefined, connectionId: string | undefined, options: DropSdkSocketsOptions): number {
    const code = options.code ?? 1012;
    if (!isSendableCloseCode(code)) throw new ToolrelayError("INVALID_OPTIONS", `relay: ${code} is not a sendable close code`);
    const { registry } = this.#parts;
    const tenant = principal?.tenant;
    const environments =
      connectionId === undefined ? registry.list(tenant) : [registry.get(connectionId, tenant)].filter((e) => e !== undefined);
    let count = 0;
    const how = options.terminate ? "terminate" : { code, reason: closeReason(options.reason ?? "Relay dropped the status socket") };
    for (const environment of environments) count += environment.dropSdkSockets(how);
    return count;
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    const { options, registry, servers, server, guard } = this.#parts;
    if (this.#timer !== undefined) options.timers.clearTimeout(this.#timer);
    guard.stop();
    await this.#parts.sandboxes?.closeAll();
    registry.removeAll("Relay shutting down");
    const clients = () => [...servers.sdk.clients, ...servers.listener.clients];
    const deadline = options.timers.now() + 1_000;
    while (clients().length > 0 && options.timers.now() < deadline)
      await new Promise((resolve) => options.timers.setTimeout(() => resolve(undefined), 10));
    for (const socket of clients()) socket.terminate();
    await Promise.all(Object.values(servers).map((wss) => new Promise<void>((resolve) => wss.close(() => resolve()))));
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    options.logger.info("relay: stopped");
  }

  /** HTTP routes (relay-routes.ts). */
  handleRequest(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { options, registry, directory, guard, emit, sandboxes } = this.#parts;
    return handleRelayRequest(
      {
        options,
        registry,
        directory,
        guard,
        emit,
        sandboxes,
        closeListener: (connectionId, code, reason) => this.closeListener(connectionId, code, reason),
        dropSdkSockets: (principal, connectionId, drop) => this.#dropSdkSockets(principal, connectionId, drop),
      },
      request,
      response,
    );
  }

  /** WebSocket upgrades. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const { options, registry, directory, servers, emit } = this.#parts;
    if (this.#closing) {
      refuseUpgrade(socket, 503, "relay is shutting down");
      return;
    }
    const url = new URL(request.url ?? "/", "http://relay.invalid");
    const refused = checkRequestOrigin(request, { bindHost: options.host, allowedHosts: options.allowedHosts });
    if (refused) {
      refuseUpgrade(socket, refused.status, refused.message);
      return;
    }
    const target = upgradeKind(url.pathname);
    if (!target) {
      refuseUpgrade(socket, 404, "no such WebSocket endpoint");
      return;
    }
    const allowQueryToken = target.kind === "sdk" && options.allowQueryToken;
    const auth = authenticate(request, url, directory, { allowQueryToken });
    if ("refusal" in auth) {
      refuseUpgrade(socket, auth.refusal.status, auth.refusal.message);
      return;
    }
    const context: UpgradeContext = { options, registry, servers, emit, accepted: (webSocket, raw) => this.accepted(webSocket, raw) };
    if (target.kind === "sdk") upgradeSdk(context, request, socket, head, url, target.connectionId, auth.principal);
    else upgradeListener(context, request, socket, head, url, target.connectionId, auth.principal);
  }
}

/** Starts a relay and resolves once it listens. Throws INVALID_OPTIONS for bad options (e.g. a public bind without keys). */
export async function startRelay(options: RelayOptions = {}): Promise<Relay> {
  const resolved = resolveRelayOptions(options);
  const directory = new TenantDirectory(
    resolved.keyTenants,
    {
      environment: resolved.maxEnvironmentsPerTenant,
      session: resolved.maxSessionsPerTenant,
      outstandingCall: resolved.maxOutstandingCallsPerTenant,
      sandbox: resolved.maxSandboxesPerTenant,
      unackedBytes: resolved.maxUnackedBytesPerTenant,
    },
    resolved.logger,
  );
  const socketServer = (maxPayload: number) => {
    const wss = new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: false, clientTracking: true });
    wss.on("error", () => {});
    return wss;
  };
  const servers = { sdk: socketServer(resolved.maxSdkFrameBytes), listener: socketServer(resolved.maxListenerFrameBytes) };
  const server = createServer();
  const guard = new ConnectionGuard({
    maxConnections: resolved.maxConnections,
    maxConnectionsPerAddress: resolved.maxConnectionsPerAddress,
    handshakeTimeoutMs: resolved.handshakeTimeoutMs,
    timers: resolved.timers,
    logger: resolved.logger,
  });
  let relay: RelayServer | undefined;
  const emit: RelayEmit = (event, ...args) => {
    (relay?.emit as ((name: string, ...rest: unknown[]) => boolean) | undefined)?.call(relay, event, ...args);
  };
  const scheduler = new FairScheduler({
    onError: (error) => resolved.logger.warn("relay: a frame handler threw", { error: String(error) }),
  });
  const registry = new ListenerRegistry({ options: resolved, scheduler, emit });
  server.on("connection", (socket) => guard.admit(socket));
  server.on("request", (request, response) => {
    if (!relay) return sendError(response, 503, "relay is starting");
    relay.handleRequest(request, response).catch(() => {
      if (!response.headersSent) sendError(response, 500, "internal error");
      else response.destroy();
    });
  });
  server.on("upgrade", (request, socket, head) => {
    if (!relay) return refuseUpgrade(socket, 503, "relay is starting");
    relay.handleUpgrade(request, socket, head);
  });
  server.on("clientError", (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) =>
      reject(new ToolrelayError("INVALID_OPTIONS", `relay: cannot listen on ${resolved.host}:${resolved.port}`, { cause: error })),
    );
    server.listen(resolved.port, resolved.host, () => resolve());
  });
  const sandboxes = resolved.sandbox
    ? new SandboxRegistry({
        options: resolved,
        sandbox: resolved.sandbox,
        directory,
        environments: registry,
        emit,
        relayUrl: () => relay?.httpUrl ?? "",
      })
    : undefined;
  relay = new RelayServer({ server, servers, registry, directory, sandboxes, guard, options: resolved, emit });
  resolved.logger.info("relay: listening", {
    url: relay.httpUrl,
    listenerMode: resolved.listenerMode,
    tenants: directory.tenants().length,
  });
  return relay;
}
