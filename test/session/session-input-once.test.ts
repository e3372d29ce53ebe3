/**
 * A turn's message is written exactly once (the real runtime does not reliably deduplicate a
 * repeated input: it starts a second run). Against a bare app-server stand-in on loopback that
 * counts every `input` frame and can withhold `input_accepted` and drop the socket.
 */
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { createSession, type Session } from "../../packages/toolrelay/src/index.js";
import { startFaultProxy } from "../../packages/toolrelay/src/testing/index.js";

const RUNTIME = { agent_id: "agent-once", conversation_id: "conv-once" };

interface Server {
  url: string;
  inputs: Array<Record<string, unknown>>;
  /** Answer inputs with input_accepted + turn_finished (default true). */
  accept: boolean;
  live: WebSocket | undefined;
  registrations: number;
  close(): Promise<void>;
}

async function startServer(): Promise<Server> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  const server: Server = {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`,
    inputs: [],
    accept: true,
    live: undefined,
    registrations: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
  wss.on("connection", (socket) => {
    server.live = socket;
    socket.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Record<string, unknown> & { type: string; request_id?: string };
      const reply = (message: Record<string, unknown>) => socket.send(JSON.stringify(message));
      if (frame.type === "runtime_start") {
        server.registrations++;
        reply({ type: "runtime_start_response", request_id: frame.request_id, success: true, runtime: RUNTIME });
      } else if (frame.type === "input") {
        server.inputs.push(frame);
        if (!server.accept) return;
        const messageId = (frame.payload as { messages: Array<{ client_message_id: string }> }).messages[0]!.client_message_id;
        const runId = `run-${server.inputs.length}`;
        reply({ type: "input_accepted", request_id: frame.request_id, accepted: true, disposition: "started", runtime: RUNTIME });
        const loop = (status: string, active: string[]) => ({
          type: "update_loop_status",
          runtime: RUNTIME,
          loop_status: {
            status,
            active_run_ids: active,
            executing_tool_call_ids: [],
            client_message_ids_by_run_id: { [runId]: [messageId] },
          },
        });
        reply(loop("PROCESSING_API_RESPONSE", [runId]));
        reply({ type: "turn_finished", turn_id: `batch-${runId}`, runtime: RUNTIME, run_id: runId, stop_reason: "end_turn" });
        reply(loop("WAITING_ON_INPUT", []));
      }
    });
  });
  return server;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(server: Server, url = server.url): Promise<Session> {
  const session = await createSession({
    backend: { kind: "local", url, pingIntervalMs: 0, backoff: { initialDelayMs: 10, maxDelayMs: 20 } },
    agent: { id: RUNTIME.agent_id },
    conversation: RUNTIME.conversation_id,
    turnStallProbeMs: 0,
  });
  session.on("error", () => undefined);
  cleanups.push(() => session.close());
  return session;
}

describe("a turn's input is written exactly once", () => {
  it("written, then the socket dies before input_accepted: the turn fails INPUT_UNCONFIRMED and the input is never written again", async () => {
    const server = await startServer();
    cleanups.push(() => server.close());
    const session = await open(server);
    server.accept = false;
    const turn = session.send("hello once");
    await expect.poll(() => server.inputs.length).toBe(1);
    server.live!.terminate();
    await expect(turn.result).rejects.toMatchObject({
      code: "INPUT_UNCONFIRMED",
      message: expect.stringContaining("may or may not have been received"),
    });
    await expect.poll(() => server.registrations).toBe(2); // reconnected and registered again
    server.accept = true;
    const next = await session.send("the next message").result;
    expect(next.stopReason).toBe("end_turn");
    const texts = server.inputs.map((frame) => JSON.stringify((frame.payload as { messages: unknown[] }).messages));
    expect(texts.filter((text) => text.includes("hello once"))).toHaveLength(1);
    expect(server.inputs).toHaveLength(2);
  });

  it("sent while the link is down: nothing goes out until it is back, then the input is written once", async () => {
    const server = await startServer();
    cleanups.push(() => server.close());
    const proxy = await startFaultProxy({ target: { host: "127.0.0.1", port: Number(new URL(server.url).port) } });
    cleanups.push(() => proxy.close());
    const session = await open(server, `ws://127.0.0.1:${proxy.port}/ws`);
    proxy.refuseNew(true);
    proxy.reset();
    await expect.poll(() => session.state).toBe("reconnecting");
    const turn = session.send("after the drop");
    await new Promise((resolve) => setTimeout(resolve, 100)); // deliberately let reconnect attempts fail meanwhile
    expect(server.inputs).toHaveLength(0);
    proxy.refuseNew(false);
    const result = await turn.result;
    expect(result.stopReason).toBe("end_turn");
    expect(server.inputs).toHaveLength(1);
  });
});
