/**
 * A hostile app-server on a raw `ws` server (127.0.0.1, port 0): it answers the
 * session's `runtime_start` like the real one, then lets a test write any text
 * at all to the SDK's socket and wait for the SDK's answers by request id.
 * Nothing of the SDK is mocked: the session talks to it over a real socket.
 */
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

export const HOSTILE_AGENT_ID = "agent-hostile";
export const HOSTILE_CONVERSATION_ID = "conv-hostile";
export const HOSTILE_RUNTIME = { agent_id: HOSTILE_AGENT_ID, conversation_id: HOSTILE_CONVERSATION_ID };

type Frame = Record<string, unknown>;

interface Waiter {
  resolve(frame: Frame): void;
  timer: NodeJS.Timeout;
}

export class HostileRuntime {
  /** Every frame the SDK sent that parsed as a JSON object, in order. */
  readonly received: Frame[] = [];
  /** Close codes of SDK sockets, in order. */
  readonly closeCodes: number[] = [];
  #server: WebSocketServer;
  #socket: WebSocket | undefined;
  #responses = new Map<string, Frame>();
  #waiters = new Map<string, Waiter>();

  private constructor(server: WebSocketServer) {
    this.#server = server;
    server.on("connection", (socket) => {
      this.#socket = socket;
      socket.on("error", () => undefined);
      socket.on("close", (code) => this.closeCodes.push(code));
      socket.on("message", (data) => this.#onMessage(socket, data.toString()));
    });
  }

  /** Start on loopback. `maxPayload` bounds what the SDK may send to it (default 64 MiB). */
  static async start(options: { maxPayload?: number } = {}): Promise<HostileRuntime> {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0, maxPayload: options.maxPayload ?? 64 * 1024 * 1024 });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    return new HostileRuntime(server);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.#server.address() as AddressInfo).port}/ws`;
  }

  /** True while the SDK's socket is open. */
  get connected(): boolean {
    return this.#socket?.readyState === 1;
  }

  /** Write one text frame to the SDK, exactly as given. */
  sendText(text: string): void {
    if (this.#socket?.readyState !== 1) throw new Error("hostile runtime: no open SDK socket");
    this.#socket.send(text);
  }

  /** Write one `external_tool_call_request` whose `input` is the given JSON text (spliced in verbatim). */
  sendToolCall(requestId: string, toolName: string, inputJson: string, toolCallId = requestId): void {
    const head = JSON.stringify({
      type: "external_tool_call_request",
      request_id: requestId,
      runtime: HOSTILE_RUNTIME,
      tool_call_id: toolCallId,
      tool_name: toolName,
    });
    this.sendText(`${head.slice(0, -1)},"input":${inputJson}}`);
  }

  /** The SDK's `external_tool_call_response` for `requestId`, or `undefined` after `timeoutMs`. */
  response(requestId: string, timeoutMs: number): Promise<Frame | undefined> {
    const known = this.#responses.get(requestId);
    if (known) return Promise.resolve(known);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(requestId);
        resolve(undefined);
      }, timeoutMs);
      this.#waiters.set(requestId, { resolve, timer });
    });
  }

  /** Responses received so far, by request id. */
  get responseCount(): number {
    return this.#responses.size;
  }

  async close(): Promise<void> {
    for (const waiter of this.#waiters.values()) clearTimeout(waiter.timer);
    this.#waiters.clear();
    for (const client of this.#server.clients) client.terminate();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #onMessage(socket: WebSocket, text: string): void {
    let frame: Frame;
    try {
      frame = JSON.parse(text) as Frame;
    } catch {
      return;
    }
    this.received.push(frame);
    if (frame.type === "runtime_start") {
      socket.send(
        JSON.stringify({
          type: "runtime_start_response",
          request_id: frame.request_id,
          success: true,
          runtime: HOSTILE_RUNTIME,
          agent: { id: HOSTILE_AGENT_ID, name: "hostile" },
          conversation: { id: HOSTILE_CONVERSATION_ID, agent_id: HOSTILE_AGENT_ID },
        }),
      );
      return;
    }
    if (frame.type === "runtime_external_tools_update") {
      socket.send(JSON.stringify({ type: "runtime_external_tools_update_response", request_id: frame.request_id, success: true }));
      return;
    }
    if (frame.type === "external_tool_call_response" && typeof frame.request_id === "string") {
      this.#responses.set(frame.request_id, frame);
      const waiter = this.#waiters.get(frame.request_id);
      if (waiter) {
        clearTimeout(waiter.timer);
        this.#waiters.delete(frame.request_id);
        waiter.resolve(frame);
      }
    }
  }
}
