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
import { RelayCluster } from "./cluster/relay-cluster.js";
import { HOP_HEADER, pipeUpgrade } from "./cluster/socket-pipe.js";
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
import { authenticate, checkRequestOrigin } from "./relay-auth.js";
import { handleRelayUpgrade, upgradeKind } from "./relay-upgrade.js";
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
  /** Cluster mode (docs/relay-cluster.md); `undefined` for a single relay. */
  cluster: RelayCluster | undefined;
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
    // A cluster node lets its environments go (1012: clients reconnect to another node) and keeps their shared records.
    if (this.#parts.cluster) await this.#parts.cluster.stop();
    else registry.removeAll("Relay shutting down");
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
    const { options, registry, directory, guard, emit, sandboxes, cluster } = this.#parts;
    return handleRelayRequest(
      {
        options,
        registry,
        directory,
        guard,
        emit,
        sandboxes,
        cluster,
        closeListener: (connectionId, code, reason) => this.closeListener(connectionId, code, reason),
        dropSdkSockets: (principal, connectionId, drop) => this.#dropSdkSockets(principal, connectionId, drop),
      },
      request,
      response,
    );
  }

  /** WebSocket upgrades (relay-upgrade.ts). */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const { options } = this.#parts;
    if (this.#closing) {
      refuseUpgrade(socket, 503, "relay is shutting down");
      return;
    }
    if (this.#parts.cluster) {
      this.#routeClusterUpgrade(this.#parts.cluster, request, socket, head).catch((error: unknown) => {
        options.logger.warn("relay: routing an upgrade in the cluster failed", { error: String(error) });
        refuseUpgrade(socket, 503, "the relay cluster's store cannot be reached; try again");
      });
      return;
    }
    this.#upgradeHere(request, socket, head);
  }

  /**
   * Cluster mode: an upgrade that names an environment of the caller's tenant is handled here when
   * this node holds the environment (or takes it), else piped to the node that does. Anything
   * the normal checks refuse is refused here, as on a single relay.
   */
  async #routeClusterUpgrade(cluster: RelayCluster, request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const { options, directory, guard } = this.#parts;
    const url = new URL(request.url ?? "/", "http://relay.invalid");
    const target = upgradeKind(url.pathname);
    const origin = checkRequestOrigin(request, { bindHost: options.host, allowedHosts: options.allowedHosts });
    const auth = target && authenticate(request, url, directory, { allowQueryToken: target.kind === "sdk" && options.allowQueryToken });
    if (!target || origin || !auth || "refusal" in auth) {
      this.#upgradeHere(request, socket, head);
      return;
    }
    const hop = request.headers[HOP_HEADER] !== undefined;
    for (let attempt = 0; attempt < 20; attempt++) {
      const route = await cluster.route(target.connectionId, auth.principal.tenant, hop);
      if (socket.destroyed) return;
      if (route.kind === "local" || route.kind === "not-found") {
        this.#upgradeHere(request, socket, head);
        return;
      }
      if (route.kind === "busy") {
        refuseUpgrade(socket, 503, route.message);
        return;
      }
      guard.established(socket);
      const piped = await pipeUpgrade(request, socket, head, { address: route.address, nodeId: cluster.nodeId, timers: options.timers });
      if (piped === "piped") return;
      await cluster.unreachable(route.nodeId, target.connectionId);
    }
    refuseUpgrade(socket, 503, "the environment's relay node cannot be reached; try again");
  }

  #upgradeHere(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const { options, registry, directory, servers, emit } = this.#parts;
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
  let cluster: RelayCluster | undefined;
  if (resolved.cluster) {
    const address = server.address() as AddressInfo;
    try {
      cluster = await RelayCluster.start({
        cluster: resolved.cluster,
        options: resolved,
        registry,
        address:
          resolved.cluster.advertiseAddress ?? `${resolved.host.includes(":") ? `[${resolved.host}]` : resolved.host}:${address.port}`,
        tenant: (name) => directory.tenant(name),
        tenants: () => directory.tenants(),
      });
    } catch (error) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      guard.stop();
      throw error;
    }
  }
  relay = new RelayServer({ server, servers, registry, directory, sandboxes, guard, options: resolved, emit, cluster });
  resolved.logger.info("relay: listening", {
    url: relay.httpUrl,
    listenerMode: resolved.listenerMode,
    tenants: directory.tenants().length,
  });
  return relay;
}
