/**
 * A session answers only for its own runtime: another agent's or conversation's tool call request
 * and approval are left alone (a `foreign-frame` event, never a run or a deny); a request it cannot
 * take — over an identity bound — is answered with an error and never run. Against a bare
 * app-server stand-in that sends what the test says and records the answers.
 */
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createSession,
  defineTool,
  type ForeignFrameEvent,
  type Session,
  type ToolCallRefusedEvent,
} from "../../packages/toolrelay/src/index.js";

const MINE = { agent_id: "agent-mine", conversation_id: "conv-mine" };
const THEIRS = { agent_id: "agent-theirs", conversation_id: "conv-theirs" };

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(): Promise<{ session: Session; socket: WebSocket; received: Array<Record<string, unknown>>; runs: string[] }> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  );
  const received: Array<Record<string, unknown>> = [];
  let socket: WebSocket | undefined;
  wss.on("connection", (connection) => {
    socket = connection;
    connection.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Record<string, unknown> & { type: string };
      received.push(frame);
      if (frame.type === "runtime_start")
        connection.send(JSON.stringify({ type: "runtime_start_response", request_id: frame.request_id, success: true, runtime: MINE }));
    });
  });
  const runs: string[] = [];
  const echo = defineTool({
    name: "echo",
    description: "Echo",
    inputSchema: z.object({ text: z.string() }),
    execute: ({ text }, { conversationId }) => {
      runs.push(`${conversationId}:${text}`);
      return text;
    },
  });
  const session = await createSession({
    backend: { kind: "local", url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`, pingIntervalMs: 0 },
    agent: { id: MINE.agent_id },
    conversation: MINE.conversation_id,
    tools: [echo],
    turnStallProbeMs: 0,
  });
  session.on("error", () => undefined);
  cleanups.push(() => session.close());
  return { session, socket: socket!, received, runs };
}

const request = (requestId: string, runtime: object | undefined, text = "hi", extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: "external_tool_call_request",
    request_id: requestId,
    ...(runtime ? { runtime } : {}),
    tool_call_id: `call-${requestId}`,
    tool_name: "echo",
    input: { text },
    ...extra,
  });

describe("a session answers only for its own runtime", () => {
  it("leaves another conversation's tool call alone and runs its own", async () => {
    const { session, socket, received, runs } = await setup();
    const foreign: ForeignFrameEvent[] = [];
    session.on("foreign-frame", (event) => foreign.push(event));
    socket.send(request("theirs-1", THEIRS));
    socket.send(request("mine-1", MINE));
    await expect.poll(() => received.filter((frame) => frame.type === "external_tool_call_response").length).toBe(1);
    expect(received.filter((frame) => frame.type === "external_tool_call_response").map((frame) => frame.request_id)).toEqual(["mine-1"]);
    expect(runs).toEqual(["conv-mine:hi"]);
    expect(foreign).toEqual([
      { type: "external_tool_call_request", requestId: "theirs-1", agentId: THEIRS.agent_id, conversationId: THEIRS.conversation_id },
    ]);
  });

  it("leaves another runtime's approval alone (no deny) and answers its own", async () => {
    const { session, socket, received } = await setup();
    const foreign: ForeignFrameEvent[] = [];
    session.on("foreign-frame", (event) => foreign.push(event));
    const approval = (requestId: string, runtime: object) =>
      JSON.stringify({
        type: "control_request",
        request_id: requestId,
        runtime,
        request: { subtype: "can_use_tool", tool_name: "echo", input: { text: "x" }, tool_call_id: requestId },
      });
    socket.send(approval("perm-theirs", THEIRS));
    socket.send(approval("perm-mine", MINE));
    await expect.poll(() => received.filter((frame) => frame.type === "input").length).toBe(1);
    const answered = received
      .filter((frame) => frame.type === "input")
      .map((frame) => frame.payload as { request_id: string; decision: unknown });
    expect(answered).toEqual([expect.objectContaining({ request_id: "perm-mine", decision: { behavior: "allow" } })]);
    expect(foreign.map((event) => event.requestId)).toEqual(["perm-theirs"]);
  });

  it.each([
    ["a request_id over 256 characters", () => request("r".repeat(300), MINE), /request_id is longer than 256/],
    [
      "a tool_call_id over 512 characters",
      () => request("long-call", MINE, "hi", { tool_call_id: "c".repeat(600) }),
      /tool_call_id is longer than 512/,
    ],
    [
      "a tool_name over 256 characters",
      () => request("long-name", MINE, "hi", { tool_name: "n".repeat(300) }),
      /tool_name is longer than 256/,
    ],
  ])("answers %s with an error and runs nothing", async (_label, frame, reason) => {
    const { session, socket, received, runs } = await setup();
    const refused: ToolCallRefusedEvent[] = [];
    session.on("tool-call-refused", (event) => refused.push(event));
    socket.send(frame());
    await expect.poll(() => received.filter((sent) => sent.type === "external_tool_call_response").length).toBe(1);
    const answer = received.find((sent) => sent.type === "external_tool_call_response")!;
    expect(answer.error).toMatch(reason);
    expect(answer.error).toMatch(/Nothing was run/);
    expect(runs).toEqual([]);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.requestId.length).toBeLessThanOrEqual(129);
  });
});
