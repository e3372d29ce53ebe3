/**
 * The relay's HTTP routes: registration (a listener key's) and listing (an SDK key's), each
 * scoped to the caller's tenant, the sandbox routes (an SDK key's), `GET /healthz`, and the opt-in `/_relay/*` test hooks — which also see only the caller's
 * tenant: another tenant's `connectionId` is a 404, "every environment" means the caller's.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RelayCluster } from "./cluster/relay-cluster.js";
import type { ConnectionGuard } from "./connection-guard.js";
import { parseRegistration, type ListenerRegistry } from "./listener-registry.js";
import type { DropSdkSocketsOptions } from "./relay.js";
import { authenticate, checkKeyRole, checkRequestOrigin } from "./relay-auth.js";
import type { RelayKeyRole } from "./relay-keys.js";
import type { RelayEmit } from "./relay-events.js";
import { isSendableCloseCode, readJsonBody, sendError, sendJson } from "./relay-http.js";
import type { ResolvedRelayOptions } from "./relay-options.js";
import type { SandboxRegistry } from "./sandbox-registry.js";
import { handleSandboxRoute, isSandboxRoute } from "./sandbox-routes.js";
import type { Principal, TenantDirectory } from "./tenant-directory.js";

export interface RouteContext {
  options: ResolvedRelayOptions;
  registry: ListenerRegistry;
  directory: TenantDirectory;
  guard: ConnectionGuard;
  emit: RelayEmit;
  /** `undefined` when the relay provisions no sandboxes. */
  sandboxes: SandboxRegistry | undefined;
  /** Cluster mode: registrations and listings go through the shared directory. */
  cluster: RelayCluster | undefined;
  closeListener(connectionId: string, code?: number, reason?: string): boolean;
  /** Drops SDK sockets of the principal's tenant (one environment, or all of the tenant's). */
  dropSdkSockets(principal: Principal, connectionId: string | undefined, options: DropSdkSocketsOptions): number;
}

export async function handleRelayRequest(context: RouteContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { options, registry, directory, emit } = context;
  const url = new URL(request.url ?? "/", "http://relay.invalid");
  options.logger.debug("relay: http request", { method: request.method, path: url.pathname });
  const refused = checkRequestOrigin(request, { bindHost: options.host, allowedHosts: options.allowedHosts });
  if (refused) return sendError(response, refused.status, refused.message);
  if (url.pathname === "/healthz" && request.method === "GET") return sendJson(response, 200, { ok: true });
  const auth = authenticate(request, url, directory, { allowQueryToken: false });
  if ("refusal" in auth) return sendError(response, auth.refusal.status, auth.refusal.message);
  const { principal } = auth;
  if (principal.sandbox && url.pathname !== "/v1/environments/register") {
    // A sandbox's key is its listener's alone: it registers that device and nothing else.
    emit("refused", {
      kind: "sandbox-device",
      tenant: principal.tenant.name,
      connectionId: undefined,
      reason: "sandbox key used for another route",
    });
    return sendError(response, 403, "a sandbox key may only register its own listener");
  }
  /** Answers 403 (and reports it) when the caller's key lacks `role`; true when it did. */
  const lacks = (role: RelayKeyRole): boolean => {
    const refusal = checkKeyRole(principal, role);
    if (!refusal) return false;
    emit("refused", { kind: "key-role", tenant: principal.tenant.name, connectionId: undefined, reason: refusal.message });
    sendError(response, refusal.status, refusal.message);
    return true;
  };
  if (isSandboxRoute(url.pathname)) {
    if (lacks("sdk")) return;
    return handleSandboxRoute({ options, sandboxes: context.sandboxes, emit }, request, response, url, principal);
  }
  if (url.pathname === "/v1/environments/register") {
    if (request.method !== "POST") return sendError(response, 405, "use POST");
    if (lacks("listener")) return;
    const body = await readJsonBody(request, options.maxBodyBytes);
    if (!body.ok) return sendError(response, body.status, body.message);
    const registration = parseRegistration(body.value);
    if (typeof registration === "string") return sendError(response, 400, registration);
    const wsBase = `ws://${request.headers.host}`;
    const outcome = context.cluster
      ? await context.cluster.register(principal, registration, wsBase)
      : registry.register(principal, registration, wsBase);
    if ("refusal" in outcome) {
      emit("refused", {
        kind: outcome.refusal.kind,
        tenant: principal.tenant.name,
        connectionId: undefined,
        reason: outcome.refusal.message,
      });
      return sendError(response, outcome.refusal.status, outcome.refusal.message);
    }
    return sendJson(response, 200, outcome.answer);
  }
  if (url.pathname === "/v1/environments" && request.method === "GET") {
    if (lacks("sdk")) return;
    // Cloud's shape: an environment whose listener is not connected has no connectionId, and
    // connectedAt is epoch ms (or null).
    if (context.cluster)
      return sendJson(response, 200, { connections: await context.cluster.connections(principal.tenant), hasNextPage: false });
    const connections = registry.list(principal.tenant).map(({ identity, listener }) => ({
      id: identity.id,
      connectionId: listener.ready ? identity.connectionId : null,
      deviceId: identity.deviceId,
      connectionName: identity.connectionName,
      connectedAt: listener.ready ? (listener.connectedAt?.getTime() ?? null) : null,
    }));
    return sendJson(response, 200, { connections, hasNextPage: false });
  }
  if (options.enableTestHooks && url.pathname.startsWith("/_relay/")) return handleTestHook(context, request, response, url, principal);
  return sendError(response, 404, "no such route");
}

async function handleTestHook(
  context: RouteContext,
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  principal: Principal,
): Promise<void> {
  const { options, registry, guard, emit } = context;
  const { tenant } = principal;
  if (url.pathname === "/_relay/environments" && request.method === "GET") {
    return sendJson(
      response,
      200,
      registry.list(tenant).map((environment) => environment.info()),
    );
  }
  if (url.pathname === "/_relay/sandboxes" && request.method === "GET") {
    // The listener's own output (its --debug lines carry frames): test hooks only, the caller's tenant only.
    const sandboxes = context.sandboxes?.list(tenant) ?? [];
    return sendJson(
      response,
      200,
      sandboxes.map((sandbox) => ({ ...sandbox, output: context.sandboxes?.output(tenant, sandbox.sandboxId) ?? [] })),
    );
  }
  if (url.pathname === "/_relay/stats" && request.method === "GET") {
    // `?gc=1` collects garbage first when the process runs with --expose-gc (memory tests read what is retained).
    const collect = (globalThis as { gc?: (() => void) | undefined }).gc;
    if (url.searchParams.get("gc") === "1" && collect) collect();
    return sendJson(response, 200, { memory: process.memoryUsage(), tenant: tenant.usage(), connections: guard.stats() });
  }
  if (request.method !== "POST") return sendError(response, 405, "use POST");
  const body = await readJsonBody(request, options.maxBodyBytes);
  if (!body.ok) return sendError(response, body.status, body.message);
  const input = (typeof body.value === "object" && body.value !== null ? body.value : {}) as Record<string, unknown>;
  const code = typeof input.code === "number" ? input.code : undefined;
  const reason = typeof input.reason === "string" ? input.reason : undefined;
  if (code !== undefined && !isSendableCloseCode(code)) return sendError(response, 400, "code is not a sendable close code");
  const connectionId = typeof input.connectionId === "string" ? input.connectionId : undefined;
  if (connectionId !== undefined && !registry.get(connectionId, tenant)) {
    emit("refused", { kind: "environment-not-found", tenant: tenant.name, connectionId, reason: "environment not found" });
    return sendError(response, 404, "environment not found");
  }
  if (url.pathname === "/_relay/close-listener") {
    if (!connectionId) return sendError(response, 400, "connectionId is required");
    return sendJson(response, 200, { closed: context.closeListener(connectionId, code, reason) });
  }
  if (url.pathname === "/_relay/drop-sdk-sockets") {
    const dropped = context.dropSdkSockets(principal, connectionId, { code, reason, terminate: input.terminate === true });
    return sendJson(response, 200, { dropped });
  }
  return sendError(response, 404, "no such test hook");
}
