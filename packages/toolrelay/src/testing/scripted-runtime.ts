/**
 * `startScriptedRuntime`: a loopback WebSocket server that speaks the same
 * app-server protocol as `letta server --listen` (Letta Code 0.32.18), with a
 * script in place of the model. Upgrade rules follow the real server: only
 * `/ws` (or `/`), `channel` query → 426, optional bearer auth → 401, an
 * `Origin` header without auth → 403. Also answers `GET /readyz`, `/healthz`
 * and `/app-server-info`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { ToolrelayError } from "../errors.js";
import { systemTimers, type TimerHandle, unrefTimer } from "../internal/timers.js";
import { handleFrame } from "./scripted-commands.js";
import { appServerInfoResponse } from "./scripted-frames.js";
import { ScriptedRuntimeCore } from "./scripted-runtime-core.js";
import type { ScriptedRuntime, StartScriptedRuntimeOptions } from "./scripted-runtime-types.js";
import { isLoopbackHost } from "../internal/loopback-host.js";

const DEFAULT_MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;
const DEFAULT_HEARTBEAT_MS = 30_000;
const MISSED_PONGS_BEFORE_TERMINATE = 3;

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

function rawHeaderCount(request: IncomingMessage, name: string): number {
  let count = 0;
  for (let index = 0; index < request.rawHeaders.length; index += 2) if (request.rawHeaders[index]?.toLowerCase() === name) count++;
  return count;
}

/**
 * DNS-rebinding guard: on a loopback bind, exactly one Host header naming a loopback host.
 * (Node keeps only the first of duplicate Host / Authorization headers, so duplicates are counted raw.)
 */
function isAllowedHost(request: IncomingMessage, bindHost: string): boolean {
  if (!isLoopbackHost(bindHost)) return true;
  const host = request.headers.host;
  if (typeof host !== "string" || rawHeaderCount(request, "host") !== 1) return false;
  const hostname = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "");
  return isLoopbackHost(hostname.toLowerCase());
}

/** `null` when authorized, else the 401 message of the real server. */
function checkBearer(request: IncomingMessage, expectedDigest: Buffer | undefined): string | null {
  if (!expectedDigest) return null;
  const headers: IncomingHttpHeaders = request.headers;
  if (rawHeaderCount(request, "authorization") > 1) return "more than one authorization header";
  const header = headers.authorization;
  if (header === undefined) return "missing websocket bearer token";
  const separator = header.indexOf(" ");
  if (separator === -1 || header.slice(0, separator).toLowerCase() !== "bearer") return "invalid authorization header";
  const token = header.slice(separator + 1).trim();
  if (!token) return "invalid authorization header";
  return timingSafeEqual(digest(token), expectedDigest) ? null : "invalid websocket bearer token";
}

function rejectUpgrade(socket: Socket, status: number, message: string): void {
  socket.end(`HTTP/1.1 ${status} ${message}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

function validate(options: StartScriptedRuntimeOptions): void {
  const fail = (message: string): never => {
    throw new ToolrelayError("INVALID_OPTIONS", `startScriptedRuntime: ${message}`);
  };
  if (typeof options?.script !== "function") fail("`script` must be a function");
  if (options.authToken !== undefined && options.authToken.trim() === "") fail("`authToken` must not be empty");
  const host = options.host ?? "127.0.0.1";
  if (!isLoopbackHost(host) && options.authToken === undefined) fail(`refusing to bind non-loopback host ${host} without authToken`);
  for (const [name, value] of Object.entries({
    port: options.port,
    externalToolTimeoutMs: options.externalToolTimeoutMs,
    missedAborts: options.missedAborts,
    staleLoopStatusWindowMs: options.staleLoopStatusWindowMs,
    maxPayloadBytes: options.maxPayloadBytes,
    heartbeatIntervalMs: options.heartbeatIntervalMs,
  })) {
    if (value !== undefined && (!Number.isFinite(value) || value < 0)) fail(`\`${name}\` must be a non-negative number`);
  }
}

/** Start a scripted runtime. Resolves once it listens; `await runtime.close()` in teardown. */
export async function startScriptedRuntime(options: StartScriptedRuntimeOptions): Promise<ScriptedRuntime> {
  validate(options);
  const host = options.host ?? "127.0.0.1";
  const version = options.version ?? "0.32.18";
  const expectedDigest = options.authToken === undefined ? undefined : digest(options.authToken.trim());
  const timers = options.timers ?? systemTimers;
  const core = new ScriptedRuntimeCore({
    timers,
    script: options.script,
    permissionMode: options.permissionMode ?? "unrestricted",
    externalToolTimeoutMs: options.externalToolTimeoutMs ?? 300_000,
    missedAborts: options.missedAborts ?? 0,
    staleLoopStatusWindowMs: options.staleLoopStatusWindowMs ?? 300,
    version,
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES });
  const missedPongs = new Map<WebSocket, number>();

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    if (request.headers.origin || !isAllowedHost(request, host)) return void response.writeHead(403).end();
    if (path === "/readyz" || path === "/healthz") return void response.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
    if (path === "/app-server-info") {
      const authError = checkBearer(request, expectedDigest);
      if (authError) return void response.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: authError }));
      return void response
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify(appServerInfoResponse("http-info", version)));
    }
    response.writeHead(404).end();
  });

  server.on("upgrade", (request: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    const url = new URL(request.url ?? "/", "http://localhost");
    if (!isAllowedHost(request, host)) return rejectUpgrade(socket, 403, "Forbidden");
    if (url.pathname !== "/ws" && url.pathname !== "/") return rejectUpgrade(socket, 404, "Not Found");
    if (url.searchParams.has("channel")) return rejectUpgrade(socket, 426, "Upgrade Required");
    const authError = checkBearer(request, expectedDigest);
    if (authError) return rejectUpgrade(socket, 401, authError);
    if (request.headers.origin !== undefined && !expectedDigest) return rejectUpgrade(socket, 403, "Forbidden");
    if (core.closed) return rejectUpgrade(socket, 503, "Service Unavailable");
    wss.handleUpgrade(request, socket, head, (websocket) => {
      const connection = core.addConnection(websocket);
      missedPongs.set(websocket, 0);
      websocket.on("pong", () => missedPongs.set(websocket, 0));
      websocket.on("message", (data: Buffer | ArrayBuffer | Buffer[]) => {
        const text = Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data as ArrayBuffer).toString("utf8");
        try {
          handleFrame(core, connection, text);
        } catch {
          // A scripted runtime never lets one bad frame break the server (the real one drops it too).
        }
      });
      websocket.on("error", () => undefined);
      websocket.on("close", () => {
        missedPongs.delete(websocket);
        core.removeConnection(connection.id);
      });
    });
  });

  const heartbeatMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS;
  let heartbeat: TimerHandle | undefined;
  const stopHeartbeat = (): void => {
    if (heartbeat !== undefined) timers.clearTimeout(heartbeat);
    heartbeat = undefined;
  };
  const scheduleHeartbeat = (): void => {
    if (heartbeatMs <= 0) return;
    heartbeat = timers.setTimeout(() => {
      for (const [websocket, missed] of missedPongs) {
        if (missed >= MISSED_PONGS_BEFORE_TERMINATE) {
          websocket.terminate();
          continue;
        }
        missedPongs.set(websocket, missed + 1);
        websocket.ping();
      }
      scheduleHeartbeat();
    }, heartbeatMs);
    unrefTimer(heartbeat);
  };
  scheduleHeartbeat();

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch((error: unknown) => {
    stopHeartbeat();
    throw new ToolrelayError("INVALID_OPTIONS", `startScriptedRuntime: cannot listen on ${host}:${options.port ?? 0}`, { cause: error });
  });

  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  let closing: Promise<void> | undefined;

  return {
    url: `ws://${urlHost}:${port}/ws`,
    port,
    get calls() {
      return core.calls.records;
    },
    get frames() {
      return core.frames;
    },
    get sentFrames() {
      return core.sentFrames;
    },
    get connections() {
      return core.connections.size;
    },
    get scriptErrors() {
      return core.scriptErrors;
    },
    registrations: () => core.state.allRegistrations(),
    dropConnections(code = 1001) {
      for (const connection of core.connections.values()) connection.close(code, "dropped by the scripted runtime");
    },
    close() {
      closing ??= (async () => {
        stopHeartbeat();
        core.shutdown();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        const errors = core.scriptErrors;
        if (errors.length === 1) throw errors[0];
        if (errors.length > 1)
          throw new AggregateError(
            errors,
            `${errors.length} scripts threw; the first: ${String((errors[0] as Error)?.message ?? errors[0])}`,
          );
      })();
      return closing;
    },
  };
}
