/**
 * The path of one tool call through the SDK, as the call stack shows it (docs/protocol.md#how-the-links-are-built):
 * from the socket's `message` callback to the tool's `execute`, and from the tool's answer to
 * `socket.send()` of the response. Both links run it through the one link base, so the cloud link
 * adds no call of its own to it: its delivery rules (ack, duplicates, `event_seq`) run and return
 * before the frame is handed on. A hop is one call from a function of the SDK to the next; the
 * tool answers at once, so the whole path is one stack. Real sockets on loopback: a `ws` server
 * stands in for the app-server and for the relay (which stamps `seq`, `idempotency_key` and
 * `event_seq` on what it sends).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { z } from "zod";
import { defineTool } from "../../packages/toolrelay/src/index.js";
import { createSessionOnLink } from "../../packages/toolrelay/src/session/create-session.js";
import { CloudLink } from "../../packages/toolrelay/src/transport/cloud-link.js";
import { LocalLink } from "../../packages/toolrelay/src/transport/local-link.js";
import type { RuntimeLink } from "../../packages/toolrelay/src/transport/runtime-link.js";
import { until } from "../support/wait.js";

/** The SDK's source folder: only its functions are counted. */
const SOURCE = fileURLToPath(new URL("../../packages/toolrelay/src/", import.meta.url));
/** The bound for the cloud path (the local path's count before the link base). */
const MAX_HOPS = 14;
const RUNTIME = { agent_id: "agent-path", conversation_id: "conv-path" };

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The SDK's functions on a stack, innermost first, as `name (path)`; the stack limit is lifted while it is read. */
function sdkFrames(): string[] {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 200;
  const stack = new Error("probe").stack ?? "";
  Error.stackTraceLimit = limit;
  return stack
    .split("\n")
    .slice(2)
    .map((line) => /^\s*at (?:async )?(.*?) \((.*?):\d+:\d+\)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null && match[2]!.startsWith(SOURCE) && !match[2]!.includes("node_modules"))
    .map((match) => `${match[1]} (${match[2]!.slice(SOURCE.length)})`);
}

interface CallPath {
  /** The SDK's functions from the socket's `message` callback (first) to the tool's `execute` caller. */
  inbound: string[];
  /** The SDK's functions from the socket's `message` callback (first) to the one that called `socket.send()`. */
  outbound: string[];
}

/** One tool call on `kind`'s link; the stacks seen by the tool and by `send()` of its response. */
async function callPath(kind: "local" | "cloud"): Promise<CallPath> {
  const path: CallPath = { inbound: [], outbound: [] };
  class ProbeSocket extends WebSocket {
    override send(data: unknown, ...rest: unknown[]): void {
      if (typeof data === "string" && data.includes('"external_tool_call_response"')) path.outbound = sdkFrames().reverse();
      (super.send as (...args: unknown[]) => void)(data, ...rest);
    }
  }
  const probe = defineTool({
    name: "probe",
    description: "Answers at once, noting the stack it runs on.",
    inputSchema: z.object({}),
    execute: () => {
      path.inbound = sdkFrames().reverse();
      return "ok";
    },
  });
  let seq = 0;
  const stamped = (frame: Record<string, unknown>) =>
    JSON.stringify(kind === "cloud" ? { ...frame, seq: ++seq, idempotency_key: `key-${seq}`, event_seq: seq } : frame);
  let answered = false;
  const http = createServer();
  const server = new WebSocketServer({ server: http });
  server.on("connection", (socket, request) => {
    if (kind === "cloud" && !request.url?.includes("channel=control")) return;
    socket.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as { type: string; request_id?: string };
      if (frame.type === "runtime_start") {
        socket.send(stamped({ type: "runtime_start_response", request_id: frame.request_id, success: true, runtime: RUNTIME }));
        const request = { type: "external_tool_call_request", request_id: "request-1", runtime: RUNTIME, tool_call_id: "call-1" };
        socket.send(stamped({ ...request, tool_name: "probe", input: {} }));
      } else if (frame.type === "external_tool_call_response") answered = true;
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    for (const socket of server.clients) socket.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });
  const port = (http.address() as AddressInfo).port;
  const link: RuntimeLink =
    kind === "local"
      ? new LocalLink({ url: `ws://127.0.0.1:${port}/ws`, pingIntervalMs: 0, WebSocket: ProbeSocket })
      : new CloudLink({
          connectionId: "environment-path",
          apiKey: "test-key",
          baseUrl: `http://127.0.0.1:${port}`,
          runtime: { agentId: RUNTIME.agent_id, conversationId: RUNTIME.conversation_id },
          pingIntervalMs: 0,
          WebSocket: ProbeSocket,
        });
  const session = await createSessionOnLink({
    backend: { kind: "link", link },
    agent: { id: RUNTIME.agent_id },
    conversation: RUNTIME.conversation_id,
    tools: [probe],
  });
  cleanups.push(() => session.close());
  await until(() => answered, "the tool call's response");
  return path;
}

/** The functions of the whole path, each once: the inbound stack, then what the outbound stack adds. */
function functionsOf(path: CallPath): string[] {
  return [...new Set([...path.inbound, ...path.outbound])];
}

describe("the path of one tool call", () => {
  it(`runs through the one link base on both links: the cloud link adds no call, ≤ ${MAX_HOPS} hops`, async () => {
    const local = await callPath("local");
    const cloud = await callPath("cloud");
    for (const path of [local, cloud]) {
      // The link is one function in, the socket's own message callback, and one out, its send().
      expect(path.inbound[0]).toMatch(/^\S+ \(transport\/socket-link\.ts\)$/);
      expect(path.outbound.at(-1)).toMatch(/\.send \(transport\/socket-link\.ts\)$/);
      expect(path.inbound.filter((frame) => frame.includes("(transport/"))).toHaveLength(1);
      expect(path.outbound.filter((frame) => frame.includes("(transport/"))).toHaveLength(2);
    }
    const localFunctions = functionsOf(local).map((frame) => frame.replace(/^LocalLink\./, "Link."));
    const cloudFunctions = functionsOf(cloud).map((frame) => frame.replace(/^CloudLink\./, "Link."));
    expect(cloudFunctions).toEqual(localFunctions);
    const hops = cloudFunctions.length - 1;
    expect(hops, `the path of one tool call:\n${cloudFunctions.join("\n")}`).toBeLessThanOrEqual(MAX_HOPS);
  });
});
