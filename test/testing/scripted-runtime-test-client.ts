/**
 * A raw `ws` client for the scripted-runtime tests: records every frame it
 * receives, sends plain objects, and waits (`until`, always with a deadline) for a
 * frame matching a predicate.
 */
import { WebSocket } from "ws";
import { until } from "../support/wait.js";

// biome-ignore lint/suspicious/noExplicitAny: a test reads a decoded frame's nested fields without declaring every shape
export type Frame = Record<string, any>;

export interface TestClient {
  readonly socket: WebSocket;
  /** Every parsed frame received, in order (live array). */
  readonly frames: Frame[];
  send(frame: unknown): void;
  sendText(text: string): void;
  /** The first frame (from index `from`, default 0) matching `predicate`; rejects after `timeoutMs` (default 5000). */
  waitFor(predicate: (frame: Frame) => boolean, options?: { timeoutMs?: number; from?: number }): Promise<Frame>;
  /** Resolves with the close code once the socket closed (deadline `timeoutMs`, default 5000). */
  closed(timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
}

const open = new Set<WebSocket>();

/** Connect; rejects with the HTTP status on a refused upgrade (`Error("unexpected status 401")`). */
export async function connectClient(url: string, headers: Record<string, string> = {}): Promise<TestClient> {
  const socket = new WebSocket(url, { headers });
  open.add(socket);
  const frames: Frame[] = [];
  let closeCode: number | undefined;
  socket.on("message", (data) => {
    frames.push(JSON.parse(String(data)) as Frame);
  });
  socket.on("close", (code) => {
    closeCode = code;
    open.delete(socket);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", (error) => {
      open.delete(socket);
      reject(error);
    });
  });
  return {
    socket,
    frames,
    send: (frame) => socket.send(JSON.stringify(frame)),
    sendText: (text) => socket.send(text),
    waitFor: (predicate, options = {}) =>
      until(() => frames.slice(options.from ?? 0).find(predicate), `a frame matching ${predicate.toString()}`, options.timeoutMs ?? 5000),
    closed: (timeoutMs = 5000) => until(() => closeCode, "the socket to close", timeoutMs),
    close: async () => {
      if (socket.readyState === WebSocket.CLOSED) return;
      const done = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      socket.close();
      await done;
    },
  };
}

/** Terminate every client still open (call in afterEach). */
export function terminateClients(): void {
  for (const socket of open) socket.terminate();
  open.clear();
}

export { letTimePass } from "../support/wait.js";

/** `runtime_start` creating an agent and a conversation, with `tools` as one unscoped group. */
export function startFrame(requestId: string, tools: Array<{ name: string; description?: string }> = [], extra: Frame = {}): Frame {
  return {
    type: "runtime_start",
    request_id: requestId,
    create_agent: { body: { name: "test-agent", model: "scripted/model" } },
    create_conversation: {},
    external_tools: [
      { tools: tools.map((tool) => ({ name: tool.name, description: tool.description ?? tool.name, parameters: { type: "object" } })) },
    ],
    ...extra,
  };
}

export function inputFrame(requestId: string, runtime: Frame, text: string, extra: Frame = {}): Frame {
  return {
    type: "input",
    request_id: requestId,
    runtime,
    payload: { kind: "create_message", messages: [{ role: "user", content: text, client_message_id: `cm-${requestId}` }], ...extra },
  };
}
