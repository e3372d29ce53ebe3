/**
 * The OpenAI-compatible chat bridge: an HTTP server (loopback by default) that lets any chat
 * client speaking OpenAI chat completions — with its own `tools` — drive a Letta Code agent
 * through toolrelay sessions on any backend. Routes: `POST /v1/chat/completions` (JSON or SSE),
 * `GET /v1/models`, `GET /v1/models/{id}`. See docs/openai-bridge.md.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { spawnLettaServer, type SpawnedLettaServer } from "../backends/spawn-letta-server.js";
import { ToolrelayError } from "../errors.js";
import type { AgentOptions, BackendOptions } from "../session/session-options.js";
import { ApiKeyCheck, checkOrigin, readJsonBody, sendJson } from "./bridge-http.js";
import type { OpenAiBridgeOptions } from "./bridge-options.js";
import { asChatApiError, ChatApiError } from "./chat-api-error.js";
import { answerChatCompletion, type ChatCompletionsContext } from "./chat-completions.js";
import type { ChatThread } from "./chat-thread.js";
import { resolveBridgeOptions } from "./resolve-bridge-options.js";
import { ThreadDirectory, type ThreadInfo } from "./thread-directory.js";

/** A running bridge (from {@link startOpenAiBridge}). */
export interface OpenAiBridge {
  /** The OpenAI base URL, `http://HOST:PORT/v1` (give it to a client as `baseURL`). */
  readonly url: string;
  /** The address it is bound to. */
  readonly host: string;
  /** The port it listens on (the one chosen when `port` was 0). */
  readonly port: number;
  /** The threads open now. */
  threads(): ThreadInfo[];
  /** Stop: no new request is accepted, every thread's session is closed (pending calls answered as cancelled), a server the bridge spawned is stopped. Idempotent. */
  close(): Promise<void>;
}

/**
 * Start the bridge. Resolves once it accepts connections.
 *
 * @throws ToolrelayError `INVALID_OPTIONS` (before anything starts), `SPAWN_FAILED` (a local
 *   `{ spawn }` backend that would not start), `CONNECT_FAILED` (the port cannot be bound).
 */
export async function startOpenAiBridge(bridgeOptions: OpenAiBridgeOptions): Promise<OpenAiBridge> {
  const options = resolveBridgeOptions(bridgeOptions);
  let spawned: SpawnedLettaServer | undefined;
  let backend: BackendOptions = options.backend;
  if (backend.kind === "local" && backend.spawn !== undefined) {
    // One app-server for every thread, not one per conversation.
    spawned = await spawnLettaServer(backend.spawn === true ? {} : backend.spawn, options.timers);
    const { spawn: _spawn, ...rest } = backend;
    backend = { ...rest, url: spawned.url };
  }
  const directory = new ThreadDirectory({ maxThreads: options.maxThreads, threadIdleMs: options.threadIdleMs, timers: options.timers });
  const keys = new ApiKeyCheck(options.apiKeys);
  const agents = new Map<string, Promise<string>>();
  const context: ChatCompletionsContext = { options, backend, directory, agentFor };

  /** `{ id }` agents are shared; a `{ create }` agent is created by the principal's first thread and reused by the others. */
  async function agentFor(principal: string, open: (agent: AgentOptions) => Promise<ChatThread>): Promise<ChatThread> {
    if ("id" in options.agent) return open(options.agent);
    const known = agents.get(principal);
    if (known !== undefined) {
      const id = await known.catch(() => undefined);
      if (id !== undefined) return open({ id });
    }
    const opening = open(options.agent);
    const agentId = opening.then((thread) => thread.agentId);
    agents.set(principal, agentId);
    agentId.catch(() => {
      if (agents.get(principal) === agentId) agents.delete(principal);
    });
    return opening;
  }

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    let cors: Record<string, string> = {};
    try {
      cors = checkOrigin(request, { bindHost: options.host, allowedHosts: options.allowedHosts, allowedOrigins: options.allowedOrigins });
      const path = (request.url ?? "/").split("?")[0]!.replace(/\/+$/, "");
      if (request.method === "OPTIONS" && request.headers.origin !== undefined) {
        response.writeHead(204, cors).end();
        return;
      }
      const principal = keys.authenticate(request);
      if (request.method === "GET" && (path === "/v1/models" || path === "/models")) {
        sendJson(response, 200, { object: "list", data: [modelEntry(options.modelId)] }, cors);
      } else if (request.method === "GET" && (path.startsWith("/v1/models/") || path.startsWith("/models/"))) {
        const id = decodeURIComponent(path.slice(path.lastIndexOf("/models/") + "/models/".length));
        if (id !== options.modelId)
          throw new ChatApiError(404, "not_found_error", "model_not_found", `the model "${id}" does not exist here`);
        sendJson(response, 200, modelEntry(id), cors);
      } else if (path === "/v1/chat/completions" || path === "/chat/completions") {
        if (request.method !== "POST") throw new ChatApiError(405, "invalid_request_error", "method_not_allowed", "use POST");
        const body = await readJsonBody(request, options.maxBodyBytes);
        await answerChatCompletion(context, principal, body, { request, response, headers: cors });
      } else {
        throw new ChatApiError(404, "not_found_error", "not_found", `no route ${request.method} ${path}`);
      }
    } catch (error) {
      const failure = asChatApiError(error);
      if (failure.status >= 500 && failure.code === "internal_error") options.onError(failure, {});
      if (response.headersSent) {
        response.destroy();
        return;
      }
      // A body that was not read to its end cannot be followed by another request on this connection.
      const close: Record<string, string> = failure.code === "body_too_large" ? { connection: "close" } : {};
      sendJson(response, failure.status, failure.toBody(), { ...cors, ...close });
      if (failure.code === "body_too_large") response.once("finish", () => request.socket.destroySoon?.());
    }
  };

  const sockets = new Set<Socket>();
  const server = createServer((request, response) => void handle(request, response));
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("clientError", (_error, socket) => socket.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port, options.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    await spawned?.stop();
    throw new ToolrelayError("CONNECT_FAILED", `the bridge cannot listen on ${options.host}:${options.port}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const port = (server.address() as AddressInfo).port;
  const hostInUrl = options.host.includes(":") ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${hostInUrl}:${port}/v1`,
    host: options.host,
    port,
    threads: () => directory.list(),
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        await directory.close();
        for (const socket of sockets) socket.destroy();
        await stopped;
        await spawned?.stop();
      })();
      return closing;
    },
  };
}

function modelEntry(id: string) {
  return { id, object: "model", created: 0, owned_by: "toolrelay" };
}
