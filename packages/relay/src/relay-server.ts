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
import { ToolrelayError } from "toolrelay/protocol";
import { ConnectionGuard } from "./connection-guard.js";
import { FairScheduler } from "./fair-scheduler.js";
import { rememberRawSocket } from "./turn-write-batch.js";
import { ListenerRegistry } from "./listener-registry.js";
import { fitToOpenFileLimit } from "./open-file-limit.js";
import { RELAY_CLOSE } from "./relay-close-codes.js";
import type { DropSdkSocketsOptions, Relay, RelayStats } from "./relay.js";
import type { RelayEmit, RelayEnvironmentInfo, RelayEvents, RelaySandboxInfo } from "./relay-events.js";
import { RelayHeartbeat } from "./relay-heartbeat.js";
import { tenantsWithSharedRoles } from "./relay-keys.js";
import { closeReason, isSendableCloseCode, refuseUpgrade, sendError } from "./relay-http.js";
import { handleRelayRequest } from "./relay-routes.js";
import type { RelayOptions, ResolvedRelayOptions } from "./relay-options.js";
import { handleRelayUpgrade } from "./relay-upgrade.js";
import { resolveRelayOptions } from "./resolve-relay-options.js";
import { SandboxRegistry } from "./sandbox-registry.js";
import { TenantDirectory, type Principal } from "./tenant-directory.js";

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
  #heartbeat: RelayHeartbeat;

  constructor(parts: RelayParts) {
    super();
    this.#parts = parts;
    const { options, servers, registry } = parts;
    const address = parts.server.address() as AddressInfo;
    this.port = address.port;
    this.host = options.host;
    const hostPart = options.host.includes(":") && !options.host.startsWith("[") ? `[${options.host}]` : options.host;
    this.url = `ws://${hostPart}:${this.port}`;
    this.httpUrl = `http://${hostPart}:${this.port}`;
    this.#heartbeat = new RelayHeartbeat({
      timers: options.timers,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      servers: Object.values(servers),
      sweep: () => registry.sweep(),
    });
  }

  /** A socket was accepted on either endpoint: heartbeat bookkeeping, and no handshake deadline any more. */
  accepted(socket: WebSocket, raw: Duplex): void {
    rememberRawSocket(socket, raw);
    this.#parts.guard.established(raw);
    this.#heartbeat.track(socket);
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
    query: {
      channel: "control" | "stream";
      agentId?: string | undefined;
      conversationId?: string | undefined;
      sessionId?: string | undefined;
    },
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
    for (const environment of environments) count += environment.sessions.dropSockets(how);
    return count;
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    const { options, registry, servers, server, guard } = this.#parts;
    this.#heartbeat.stop();
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

  /** WebSocket upgrades (relay-upgrade.ts). */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const { options, registry, directory, servers, emit } = this.#parts;
    if (this.#closing) {
      refuseUpgrade(socket, 503, "relay is shutting down");
      return;
    }
    handleRelayUpgrade(
      { options, registry, directory, servers, emit, accepted: (webSocket, raw) => this.accepted(webSocket, raw) },
      request,
      socket,
      head,
    );
  }
}

/**
 * Starts a relay and resolves once it listens. Throws INVALID_OPTIONS for bad options (e.g. a
 * public bind without keys, or a `maxConnections` over the open-file limit).
 */
export async function startRelay(options: RelayOptions = {}): Promise<Relay> {
  const resolved = fitToOpenFileLimit(resolveRelayOptions(options), options.maxConnections !== undefined);
  for (const tenant of tenantsWithSharedRoles(resolved.keys)) {
    resolved.logger.warn(
      `relay: tenant ${tenant} has keys of both roles beside other keys: any of them may act as its listener; give each key one role (docs/relay.md "Key roles")`,
    );
  }
  const directory = new TenantDirectory(
    resolved.keys,
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
