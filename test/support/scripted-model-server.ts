/**
 * An OpenAI-compatible HTTP server on 127.0.0.1 that plays the model for the real Letta Code
 * peer (its local backend, `LLAMA_CPP_BASE_URL=<server.url>`). It records every chat request
 * and answers from a per-test script: plain text, or tool calls the peer then executes.
 *
 * Routes: `GET /v1/models` (one model), `GET /props` (404, like a non-llama.cpp server; with
 * `vision: true`, llama.cpp's answer for a model that takes images),
 * `POST /v1/chat/completions` (server-sent events when `stream: true`, JSON otherwise).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One message of an OpenAI chat request, as the peer sent it. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; type?: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
  [key: string]: unknown;
}

/** One tool the peer offered to the model (OpenAI `tools[]` entry). */
export interface OfferedTool {
  type: string;
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** A tool result message, with its content flattened to text. */
export interface ToolResult {
  toolCallId: string;
  text: string;
  message: ChatMessage;
}

/** One recorded `POST /v1/chat/completions`. */
export interface ModelRequest {
  /** 0-based position in `server.requests`. */
  index: number;
  /** The whole JSON body as received. */
  body: Record<string, unknown>;
  model: string;
  stream: boolean;
  messages: ChatMessage[];
  tools: OfferedTool[];
  toolNames: string[];
  lastMessage: ChatMessage | undefined;
  /**
   * Text of the last `role: "user"` message without the peer's `<system-reminder>` parts (the
   * peer prepends those to the user's own text as separate content parts). "" if none.
   */
  lastUserText: string;
  /** The `role: "tool"` messages after the last assistant message (answers to its tool calls). */
  toolResults: ToolResult[];
}

export interface ScriptedToolCall {
  /** Default `call_<n>` (unique per server). */
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type ScriptedReply =
  | {
      text: string;
      toolCalls?: undefined;
      /** Wait this long before answering (ms). Default 0. */
      delayMs?: number;
    }
  | {
      /** Narration sent before the tool calls. */
      text?: string;
      toolCalls: ScriptedToolCall[];
      delayMs?: number;
    }
  | {
      /** Answer with an HTTP error instead (e.g. 500), body `{ error: { message } }`. */
      httpError: { status: number; message?: string };
      delayMs?: number;
    };

export type ModelScript = (request: ModelRequest) => ScriptedReply | Promise<ScriptedReply>;

export interface ScriptedModelServerOptions {
  /** Model id listed at `/v1/models`. Default `"scripted-model"`. */
  modelId?: string;
  /** Initial script. Default {@link defaultModelScript}. */
  script?: ModelScript;
  /**
   * Say at `GET /props`, as llama.cpp does, that the model takes images (`modalities.vision`):
   * the peer then sends a user's images on instead of "(image omitted: model does not support
   * images)". Default `false` (404 there).
   */
  vision?: boolean;
}

export interface ScriptedModelServer {
  /** OpenAI base URL, ending in `/v1` (give this to the peer as `LLAMA_CPP_BASE_URL`). */
  readonly url: string;
  readonly port: number;
  readonly modelId: string;
  /** The handle the peer uses for this model: `llama.cpp/<modelId>`. */
  readonly modelHandle: string;
  /** Every chat request so far, in arrival order (live array). */
  readonly requests: ModelRequest[];
  setScript(script: ModelScript): void;
  /** Back to {@link defaultModelScript}. */
  resetScript(): void;
  clearRequests(): void;
  /** Resolves with the first recorded request (from `fromIndex`, default 0) that matches. */
  waitForRequest(
    predicate?: (request: ModelRequest) => boolean,
    options?: { timeoutMs?: number; fromIndex?: number },
  ): Promise<ModelRequest>;
  close(): Promise<void>;
}

/** Last message a tool result → `done: <result text>`; anything else → `pong`. */
export const defaultModelScript: ModelScript = (request) => {
  if (request.lastMessage?.role === "tool") {
    return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}` };
  }
  return { text: "pong" };
};

/** Flattens OpenAI message content (string or parts) to text. */
export function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        if (typeof part === "string") return part;
        if (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string") {
          return (part as { text: string }).text;
        }
        return "";
      })
      .join("");
  }
  return "";
}

function toModelRequest(index: number, body: Record<string, unknown>): ModelRequest {
  const messages = Array.isArray(body.messages) ? (body.messages as ChatMessage[]) : [];
  const tools = Array.isArray(body.tools) ? (body.tools as OfferedTool[]) : [];
  let lastAssistant = -1;
  messages.forEach((message, position) => {
    if (message.role === "assistant") lastAssistant = position;
  });
  const toolResults = messages
    .slice(lastAssistant + 1)
    .filter((message) => message.role === "tool")
    .map((message) => ({
      toolCallId: String(message.tool_call_id ?? ""),
      text: messageText(message.content),
      message,
    }));
  const lastUser = [...messages].reverse().find((message) => message.role === "user");
  const lastUserText = lastUser
    ? Array.isArray(lastUser.content)
      ? lastUser.content
          .map((part) => messageText([part]))
          .filter((text) => !text.trimStart().startsWith("<system-reminder>"))
          .join("\n")
      : messageText(lastUser.content)
    : "";
  return {
    index,
    body,
    model: String(body.model ?? ""),
    stream: body.stream === true,
    messages,
    tools,
    toolNames: tools.map((tool) => tool.function?.name).filter((name): name is string => !!name),
    lastMessage: messages[messages.length - 1],
    lastUserText,
    toolResults,
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  response.end(text);
}

export async function startScriptedModelServer(options: ScriptedModelServerOptions = {}): Promise<ScriptedModelServer> {
  const modelId = options.modelId ?? "scripted-model";
  let script: ModelScript = options.script ?? defaultModelScript;
  const requests: ModelRequest[] = [];
  const waiters = new Set<() => void>();
  const sockets = new Set<Socket>();
  let callCounter = 0;
  let completionCounter = 0;
  let closed = false;

  const answerChat = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(await readBody(request));
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
      body = parsed as Record<string, unknown>;
    } catch {
      sendJson(response, 400, { error: { message: "invalid JSON body" } });
      return;
    }
    const recorded = toModelRequest(requests.length, body);
    requests.push(recorded);
    for (const wake of [...waiters]) wake();

    let reply: ScriptedReply;
    try {
      reply = await script(recorded);
    } catch (error) {
      sendJson(response, 500, { error: { message: `script threw: ${String(error)}` } });
      return;
    }
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (response.destroyed || closed) return;
    if ("httpError" in reply) {
      sendJson(response, reply.httpError.status, {
        error: { message: reply.httpError.message ?? "scripted error", type: "server_error" },
      });
      return;
    }

    completionCounter += 1;
    const completionId = `chatcmpl-scripted-${completionCounter}`;
    const created = Math.floor(Date.now() / 1000);
    const text = reply.text ?? "";
    const toolCalls = (reply.toolCalls ?? []).map((call) => ({
      id: call.id ?? `call_${++callCounter}`,
      type: "function" as const,
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    }));
    const finishReason = toolCalls.length > 0 ? "tool_calls" : "stop";
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

    if (!recorded.stream) {
      sendJson(response, 200, {
        id: completionId,
        object: "chat.completion",
        created,
        model: modelId,
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: text.length > 0 ? text : null,
              ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            },
            finish_reason: finishReason,
          },
        ],
        usage,
      });
      return;
    }

    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    const chunk = (delta: Record<string, unknown>, finish: string | null): void => {
      response.write(
        `data: ${JSON.stringify({
          id: completionId,
          object: "chat.completion.chunk",
          created,
          model: modelId,
          choices: [{ index: 0, delta, finish_reason: finish }],
        })}\n\n`,
      );
    };
    chunk({ role: "assistant", content: "" }, null);
    if (text.length > 0) chunk({ content: text }, null);
    toolCalls.forEach((call, index) => {
      chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] }, null);
      chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] }, null);
    });
    chunk({}, finishReason);
    const streamOptions = body.stream_options as { include_usage?: unknown } | undefined;
    if (streamOptions?.include_usage === true) {
      response.write(
        `data: ${JSON.stringify({ id: completionId, object: "chat.completion.chunk", created, model: modelId, choices: [], usage })}\n\n`,
      );
    }
    response.end("data: [DONE]\n\n");
  };

  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method === "GET" && (path === "/v1/models" || path === "/models")) {
      sendJson(response, 200, {
        object: "list",
        data: [{ id: modelId, object: "model", created: 0, owned_by: "toolrelay-tests" }],
      });
      return;
    }
    if (request.method === "GET" && path === "/props" && options.vision === true) {
      sendJson(response, 200, { modalities: { vision: true } });
      return;
    }
    if (request.method === "POST" && (path === "/v1/chat/completions" || path === "/chat/completions")) {
      answerChat(request, response).catch(() => {
        if (!response.headersSent) sendJson(response, 500, { error: { message: "scripted model failed" } });
        else response.destroy();
      });
      return;
    }
    sendJson(response, 404, { error: { message: `no route ${request.method} ${path}` } });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    modelId,
    modelHandle: `llama.cpp/${modelId}`,
    requests,
    setScript(next) {
      script = next;
    },
    resetScript() {
      script = defaultModelScript;
    },
    clearRequests() {
      requests.length = 0;
    },
    waitForRequest(predicate = () => true, waitOptions = {}) {
      const timeoutMs = waitOptions.timeoutMs ?? 10_000;
      const fromIndex = waitOptions.fromIndex ?? 0;
      const find = () => requests.slice(fromIndex).find(predicate);
      const found = find();
      if (found) return Promise.resolve(found);
      return new Promise<ModelRequest>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`scripted model: no matching request within ${timeoutMs} ms (${requests.length} recorded)`));
        }, timeoutMs);
        const check = () => {
          const match = find();
          if (!match) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(match);
        };
        waiters.add(check);
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await done;
    },
  };
}
