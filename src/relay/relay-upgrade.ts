/**
 * The two WebSocket endpoints of the relay: the listener's socket(s) at the `wsUrl` handed out
 * on registration, and the SDK's status sockets. Parameters are checked before the upgrade;
 * an unknown environment is a 404 for an SDK, and an accepted-then-closed 1008 for a listener
 * (which makes it register again).
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocket, WebSocketServer } from "ws";
import type { ListenerSocketParams } from "./listener-connection.js";
import type { ListenerRegistry } from "./listener-registry.js";
import { refuseUpgrade } from "./relay-http.js";
import type { ResolvedRelayOptions } from "./relay-options.js";
import { runtimeKeyOf, type Channel } from "./relay-routing.js";

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
  server: WebSocketServer;
  /** Called for every accepted socket (heartbeat bookkeeping). */
  track(socket: WebSocket): void;
}

/**
 * SDK status socket: `?channel=control|stream[&agentId[&conversationId]][&sessionId]`. Without
 * `sessionId` and `agentId` the socket is anonymous (paired with its partner by arrival).
 */
export function upgradeSdk(context: UpgradeContext, request: IncomingMessage, socket: Duplex, head: Buffer, url: URL, connectionId: string): void {
  const environment = context.registry.get(connectionId);
  if (!environment || environment.isRemoved) return refuseUpgrade(socket, 404, "environment not found");
  const channel = url.searchParams.get("channel");
  if (channel !== "control" && channel !== "stream") return refuseUpgrade(socket, 400, "channel must be control or stream");
  const agentId = param(url, "agentId");
  const conversationId = param(url, "conversationId");
  const sessionId = param(url, "sessionId");
  if (agentId === false || conversationId === false || sessionId === false) {
    return refuseUpgrade(socket, 400, `query parameters must be 1..${MAX_PARAM_LENGTH} characters`);
  }
  const runtimeKey = agentId ? runtimeKeyOf(agentId, conversationId) : undefined;
  const identity = sessionId ? `session:${sessionId}` : runtimeKey ? `runtime:${runtimeKey}` : undefined;
  context.server.handleUpgrade(request, socket, head, (webSocket) => {
    context.track(webSocket);
    if (environment.isRemoved) {
      webSocket.close(1008, "Environment gone");
      return;
    }
    environment.attachSdk(webSocket, channel as Channel, identity, runtimeKey);
  });
}

/** Listener socket: `?deviceId&connectionName[&channel][&connectionGeneration&connectionAttempt]`. */
export function upgradeListener(
  context: UpgradeContext,
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  url: URL,
  connectionId: string,
): void {
  const channelParam = url.searchParams.get("channel");
  if (channelParam !== null && channelParam !== "control" && channelParam !== "stream") {
    return refuseUpgrade(socket, 400, "channel must be control or stream");
  }
  const generation = param(url, "connectionGeneration");
  const attemptText = url.searchParams.get("connectionAttempt");
  const attempt = attemptText === null ? undefined : Number(attemptText);
  if (generation === false || (generation !== undefined && (attempt === undefined || !Number.isInteger(attempt) || attempt < 1))) {
    return refuseUpgrade(socket, 400, "connectionGeneration needs a positive integer connectionAttempt");
  }
  if (generation !== undefined && channelParam === null) {
    return refuseUpgrade(socket, 400, "connectionGeneration needs a channel");
  }
  const environment = context.registry.get(connectionId);
  const params: ListenerSocketParams = {
    channel: channelParam ?? "single",
    generation,
    attempt: generation === undefined ? undefined : attempt,
  };
  context.server.handleUpgrade(request, socket, head, (webSocket) => {
    context.track(webSocket);
    if (!environment || environment.isRemoved) {
      // The listener's contract: 1008 means "environment not found, register again".
      webSocket.close(1008, "Environment not found");
      return;
    }
    const deviceId = url.searchParams.get("deviceId");
    if (deviceId !== null && deviceId !== environment.identity.deviceId) {
      webSocket.close(1008, "Device does not own this environment");
      return;
    }
    environment.attachListener(webSocket, params);
  });
}
