/**
 * A minimal app-server stand-in for load tests: it answers `runtime_start`,
 * fires `external_tool_call_request`s in bulk and drops the connection on
 * command, keeping only counters (the scripted runtime records every frame,
 * which a 10,000-call run should not pay for).
 */
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { until } from "./wait.js";

export const LOAD_SCOPE = { agent_id: "agent-load", conversation_id: "conv-load" };

export interface LoadRuntime {
  url: string;
  /** `runtime_start`s answered (1 + reconnects). */
  readonly registrations: number;
  /** Responses received, and their total size in bytes. */
  readonly responses: number;
  readonly responseBytes: number;
  /** Request ids answered more than once. */
  readonly duplicateResponses: number;
  /** Send `count` requests (fresh tool_call_ids) on the live connection; resolves when all are answered. */
  fire(count: number, toolName: string): Promise<void>;
  /** Drop the live connection (TCP close without a close frame) and wait for the session to register again. */
  dropAndWaitForReconnect(): Promise<void>;
  close(): Promise<void>;
}

export async function startLoadRuntime(): Promise<LoadRuntime> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, maxPayload: 1024 * 1024 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  let live: WebSocket | undefined;
  let registrations = 0;
  let responses = 0;
  let responseBytes = 0;
  let duplicateResponses = 0;
  let next = 0;
  const waiting = new Set<string>();
  const answered = new Set<string>();
  server.on("connection", (socket) => {
    socket.on("error", () => undefined);
    socket.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString()) as { type?: string; request_id?: string };
      if (frame.type === "runtime_start") {
        live = socket;
        socket.send(JSON.stringify({ type: "runtime_start_response", request_id: frame.request_id, success: true, runtime: LOAD_SCOPE }));
        registrations++;
      } else if (frame.type === "external_tool_call_response" && typeof frame.request_id === "string") {
        responses++;
        responseBytes += data.length;
        if (answered.has(frame.request_id)) duplicateResponses++;
        answered.add(frame.request_id);
        waiting.delete(frame.request_id);
      }
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}/ws`,
    get registrations() {
      return registrations;
    },
    get responses() {
      return responses;
    },
    get responseBytes() {
      return responseBytes;
    },
    get duplicateResponses() {
      return duplicateResponses;
    },
    async fire(count, toolName) {
      const socket = live;
      if (!socket) throw new Error("no live connection");
      for (let index = 0; index < count; index++) {
        const id = next++;
        const requestId = `load-request-${id}`;
        waiting.add(requestId);
        socket.send(
          JSON.stringify({
            type: "external_tool_call_request",
            request_id: requestId,
            runtime: LOAD_SCOPE,
            tool_call_id: `load-call-${id}`,
            tool_name: toolName,
            input: { n: id },
          }),
        );
      }
      await until(() => waiting.size === 0, `${count} responses`, 10_000);
    },
    async dropAndWaitForReconnect() {
      const before = registrations;
      live?.terminate();
      live = undefined;
      await until(() => registrations > before && live !== undefined, "re-registration", 5_000);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}
