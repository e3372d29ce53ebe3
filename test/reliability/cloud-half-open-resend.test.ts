/**
 * Issue 23, finding 4: an answer written into a cloud link that died before its first pong is
 * written again by the SDK itself after the reconnect. The reference relay re-offers unanswered
 * calls to a resumed session, which would hide a missing resend; Letta Cloud is not known to. So
 * here the far end is a status-relay stand-in on raw `ws` that sends the request once and never
 * again (it answers pings and `runtime_start`, nothing else). SDK session (cloud backend, real
 * timers) ⇄ a proxy that kills one direction ⇄ the stand-in. The answer must reach the stand-in
 * on the new connection: the link found the dead path within pingInterval + pongTimeout, well
 * inside the call table's `resendWindowMs`, and reported the new connection as a new epoch.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { z } from "zod";
import { createSession, defineTool } from "../../packages/toolrelay/src/index.js";
import { startHalfOpenProxy, type ProxyDirection } from "../transport/half-open-proxy.js";
import { letTimePass, until } from "./support/wait.js";

const RUNTIME = { agent_id: "agent-resend", conversation_id: "conv-resend" };
const PING_INTERVAL_MS = 500;
const PONG_TIMEOUT_MS = 1_000;

interface StandInConnection {
  channel: string;
  frames: Array<{ type?: string; request_id?: string; result?: unknown }>;
}

/** Answers JSON pings (and, as `ws` does, protocol pings) and every `runtime_start`; sends one tool call request on the first control socket. */
async function startStandInRelay() {
  const connections: StandInConnection[] = [];
  const server: Server = createServer((_request, response) => {
    response.statusCode = 404;
    response.end();
  });
  const wss = new WebSocketServer({ server });
  wss.on("connection", (socket, request) => {
    const channel = new URL(request.url ?? "/", "http://relay").searchParams.get("channel") ?? "";
    const connection: StandInConnection = { channel, frames: [] };
    connections.push(connection);
    socket.on("error", () => undefined);
    socket.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as StandInConnection["frames"][number];
      connection.frames.push(frame);
      if (frame.type === "ping") socket.send(JSON.stringify({ type: "pong" }));
      if (frame.type === "runtime_start") {
        socket.send(JSON.stringify({ type: "runtime_start_response", request_id: frame.request_id, success: true, runtime: RUNTIME }));
        if (connections.filter((entry) => entry.channel === "control").length === 1) {
          socket.send(
            JSON.stringify({
              type: "external_tool_call_request",
              request_id: "external-tool-1",
              runtime: RUNTIME,
              tool_call_id: "call-1",
              tool_name: "work",
              input: { n: 1 },
            }),
          );
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    answers: (connection: StandInConnection | undefined) =>
      (connection?.frames ?? []).filter((frame) => frame.type === "external_tool_call_response" && frame.request_id === "external-tool-1"),
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        server.close(() => resolve());
      }),
  };
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const cases: Array<{ name: string; dead: ProxyDirection[] }> = [
  { name: "both directions", dead: ["to-target", "to-client"] },
  { name: "SDK → relay only", dead: ["to-target"] },
];

describe("an answer written into a cloud link that died before its first pong (a relay that never re-offers)", () => {
  for (const { name, dead } of cases) {
    it(`dead ${name}: the SDK writes it again on the new connection, once`, async () => {
      const relay = await startStandInRelay();
      cleanups.push(() => relay.close());
      const proxy = await startHalfOpenProxy({ host: "127.0.0.1", port: relay.port });
      cleanups.push(() => proxy.close());
      let executions = 0;
      let killedConnections = 0;
      const work = defineTool({
        name: "work",
        description: "Kills the path as it starts, then answers",
        inputSchema: z.object({ n: z.number() }),
        execute: async ({ n }) => {
          executions++;
          killedConnections = proxy.kill(dead);
          await letTimePass(50); // on purpose: the answer is written after the path died
          return `done ${n}`;
        },
      });
      const session = await createSession({
        backend: {
          kind: "cloud",
          apiKey: "stand-in-key",
          baseUrl: `http://127.0.0.1:${proxy.port}`,
          environment: { connectionId: "env-stand-in" },
          pingIntervalMs: PING_INTERVAL_MS,
          pongTimeoutMs: PONG_TIMEOUT_MS,
          backoff: { initialDelayMs: 20, maxDelayMs: 200 },
        },
        agent: { id: RUNTIME.agent_id },
        conversation: RUNTIME.conversation_id,
        tools: [work],
        turnStallProbeMs: 0,
      });
      cleanups.push(() => session.close());
      session.on("error", () => undefined);

      await until(() => executions === 1, "the tool ran", 2_000);
      expect(killedConnections).toBe(2);
      const controls = () => relay.connections.filter((connection) => connection.channel === "control");
      await until(() => controls().length === 2, "the SDK reconnected", PING_INTERVAL_MS + PONG_TIMEOUT_MS + 2_000);
      await until(() => relay.answers(controls()[1]).length > 0, "the answer written again on the new connection", 2_000);
      await letTimePass(300); // on purpose: no second copy follows
      expect(relay.answers(controls()[0])).toEqual([]); // the first copy died with the path
      expect(relay.answers(controls()[1])).toHaveLength(1);
      expect(JSON.stringify(relay.answers(controls()[1])[0]?.result)).toContain('"text":"done 1"');
      expect(executions).toBe(1);
    });
  }
});
