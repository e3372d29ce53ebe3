/**
 * The two WebSocket endpoints of the relay: the listener's socket(s) at the `wsUrl` handed out
 * on registration, and the SDK's status sockets. An upgrade passes the origin check, names an
 * endpoint and carries a known key first; then parameters, tenant and bindings are checked
 * before the upgrade: an environment that does not exist — or is another tenant's, which looks
 * the same — is a 404 for an SDK, and an accepted-then-closed 1008 for a listener (which makes
 * it register again). A listener socket must name the device that registered the environment
 * and carry a listener key; an SDK status socket an SDK key (a 403 before the upgrade, else).
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocket, WebSocketServer } from "ws";
import type { ListenerSocketParams } from "./listener-connection.js";
import type { ListenerRegistry } from "./listener-registry.js";
import { authenticate, checkKeyRole, checkRequestOrigin } from "./relay-auth.js";
import { RELAY_CLOSE } from "./relay-close-codes.js";
import type { RelayEmit } from "./relay-events.js";
import { refuseUpgrade } from "./relay-http.js";
import type { ResolvedRelayOptions } from "./relay-options.js";
import { runtimeKeyOf } from "./relay-frame.js";
import type { Channel } from "./relay-routing.js";
import { bindingFromUrl } from "./runtime-binding.js";
import type { Principal, TenantDirectory } from "./tenant-directory.js";

const SDK_PATH = /^\/v1\/environments\/([^/]+)\/status\/ws$/;
const LISTENER_PATH = /^\/v1\/environments\/([^/]+)\/listener\/ws$/;
const MAX_PARAM_LENGTH = 512;

/** Which upgrade endpoint a path names (`undefined` for none). */
export function upgradeKind(pathname: string): { kind: "sdk" | "listener"; connectionId: string } | undefined {
  const sdk = SDK_PATH.exec(pathname);
  if (sdk?.[1]) return { kind: "sdk", connectionId: safeDecode(sdk[1]) };
  const listener = LISTENER_PATH.exec(pathname);
  if (listener?.[1]) return { kind: "listener", connectionId: safeDecode(listener[1]) };
  return undefined;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function param(url: URL, name: string): string | undefined | false {
  const value = url.searchParams.get(name);
  if (value === null) return undefined;
  if (value.length === 0 || value.length > MAX_PARAM_LENGTH) return false;
  return value;
}

export interface UpgradeContext {
  options: ResolvedRelayOptions;
  registry: ListenerRegistry;
  directory: TenantDirectory;
  /** One server per socket kind (each with its own `maxPayload`). */
  servers: { sdk: WebSocketServer; listener: WebSocketServer };
  emit: RelayEmit;
  /** Called for every accepted socket (heartbeat bookkeeping, connection guard). */
  accepted(socket: WebSocket, raw: Duplex): void;
}

const NOT_FOUND = "environment not found";

/** Any WebSocket upgrade: origin, endpoint and credentials checked, then the endpoint's own checks. */
export function handleRelayUpgrade(context: UpgradeContext, request: IncomingMessage, socket: Duplex, head: Buffer): void {
  const { options, directory } = context;
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
  // An SDK key on the listener socket would push the real listener off and send tool calls the SDK runs.
  const roleRefusal = checkKeyRole(auth.principal, target.kind);
  if (roleRefusal && !auth.principal.sandbox) {
    context.emit("refused", {
      kind: "key-role",
      tenant: auth.principal.tenant.name,
      connectionId: target.connectionId,
      reason: roleRefusal.message,
    });
    refuseUpgrade(socket, roleRefusal.status, roleRefusal.message);
    return;
  }
  if (target.kind === "sdk") upgradeSdk(context, request, socket, head, url, target.connectionId, auth.principal);
  else upgradeListener(context, request, socket, head, url, target.connectionId, auth.principal);
}

/**
 * SDK status socket: `?channel=control|stream[&agentId[&conversationId]][&sessionId]`. A
 * `sessionId` names the session (bound to the key that created it); without one, `agentId` +
 * `conversationId` do (per key); without those the socket is anonymous (paired with its
 * partner by arrival).
 */
function upgradeSdk(
  context: UpgradeContext,
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  url: URL,
  connectionId: string,
  principal: Principal,
): void {
  if (principal.sandbox) {
    context.emit("refused", {
      kind: "sandbox-device",
      tenant: principal.tenant.name,
      connectionId,
      reason: "sandbox key on an SDK socket",
    });
    refuseUpgrade(socket, 403, "a sandbox key may only connect its own listener");
    return;
  }
  const environment = context.registry.get(connectionId, principal.tenant);
  if (!environment || environment.isRemoved) {
    context.emit("refused", { kind: "environment-not-found", tenant: principal.tenant.name, connectionId, reason: NOT_FOUND });
    refuseUpgrade(socket, 404, NOT_FOUND);
    return;
  }
  const channel = url.searchParams.get("channel");
  if (channel !== "control" && channel !== "stream") {
    refuseUpgrade(socket, 400, "channel must be control or stream");
    return;
  }
  const agentId = param(url, "agentId");
  const conversationId = param(url, "conversationId");
  const sessionId = param(url, "sessionId");
  if (agentId === false || conversationId === false || sessionId === false) {
    refuseUpgrade(socket, 400, `query parameters must be 1..${MAX_PARAM_LENGTH} characters`);
    return;
  }
  if (conversationId !== undefined && agentId === undefined) {
    refuseUpgrade(socket, 400, "conversationId needs agentId");
    return;
  }
  const binding = bindingFromUrl(agentId, conversationId);
  const identity = sessionId
    ? `session:${sessionId}`
    : binding.state === "bound"
      ? `runtime:${principal.keyId}:${runtimeKeyOf(binding.agentId, binding.conversationId)}`
      : undefined;
  const refused = environment.sessions.check(principal, identity, binding, channel);
  if (refused) {
    context.emit("refused", { kind: refused.kind, tenant: principal.tenant.name, connectionId, reason: refused.message });
    refuseUpgrade(socket, refused.status, refused.message);
    return;
  }
  context.servers.sdk.handleUpgrade(request, socket, head, (webSocket) => {
    context.accepted(webSocket, socket);
    if (environment.isRemoved) {
      webSocket.close(RELAY_CLOSE.environmentGone.code, RELAY_CLOSE.environmentGone.reason);
      return;
    }
    environment.sessions.attach(webSocket, channel as Channel, principal, identity, binding);
  });
}

/** Listener socket: `?deviceId&connectionName[&channel][&connectionGeneration&connectionAttempt]`. */
function upgradeListener(
  context: UpgradeContext,
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  url: URL,
  connectionId: string,
  principal: Principal,
): void {
  const channelParam = url.searchParams.get("channel");
  if (channelParam !== null && channelParam !== "control" && channelParam !== "stream") {
    refuseUpgrade(socket, 400, "channel must be control or stream");
    return;
  }
  const generation = param(url, "connectionGeneration");
  const attemptText = url.searchParams.get("connectionAttempt");
  const attempt = attemptText === null ? undefined : Number(attemptText);
  if (generation === false || (generation !== undefined && (attempt === undefined || !Number.isInteger(attempt) || attempt < 1))) {
    refuseUpgrade(socket, 400, "connectionGeneration needs a positive integer connectionAttempt");
    return;
  }
  if (generation !== undefined && channelParam === null) {
    refuseUpgrade(socket, 400, "connectionGeneration needs a channel");
    return;
  }
  const deviceId = param(url, "deviceId");
  if (deviceId === undefined || deviceId === false) {
    context.emit("refused", { kind: "wrong-device", tenant: principal.tenant.name, connectionId, reason: "deviceId is required" });
    refuseUpgrade(socket, 400, "deviceId is required (the device that registered the environment)");
    return;
  }
  if (principal.sandbox && principal.sandbox.deviceId !== deviceId) {
    context.emit("refused", {
      kind: "sandbox-device",
      tenant: principal.tenant.name,
      connectionId,
      reason: "sandbox key for another device",
    });
    refuseUpgrade(socket, 403, "a sandbox key may only connect its own listener");
    return;
  }
  const environment = context.registry.get(connectionId, principal.tenant);
  const params: ListenerSocketParams = {
    channel: channelParam ?? "single",
    generation,
    attempt: generation === undefined ? undefined : attempt,
  };
  context.servers.listener.handleUpgrade(request, socket, head, (webSocket) => {
    context.accepted(webSocket, socket);
    if (!environment || environment.isRemoved) {
      // The listener's contract: 1008 means "environment not found, register again".
      context.emit("refused", { kind: "environment-not-found", tenant: principal.tenant.name, connectionId, reason: NOT_FOUND });
      webSocket.close(RELAY_CLOSE.environmentNotFound.code, RELAY_CLOSE.environmentNotFound.reason);
      return;
    }
    if (deviceId !== environment.identity.deviceId) {
      context.emit("refused", {
        kind: "wrong-device",
        tenant: principal.tenant.name,
        connectionId,
        reason: RELAY_CLOSE.wrongDevice.reason,
      });
      webSocket.close(RELAY_CLOSE.wrongDevice.code, RELAY_CLOSE.wrongDevice.reason);
      return;
    }
    environment.attachListener(webSocket, params);
  });
}
