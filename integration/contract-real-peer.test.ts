/**
 * The settlement contract where the REAL Letta Code app-server (0.32.18) is
 * less kind than our scripted runtime: a provider that reuses `call_0` in every
 * turn, another client's pending approval replayed to every new connection, and
 * a thrown string that must not read like a result to the model. Real
 * app-server, scripted OpenAI-compatible model, each a separate process.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSession, defineTool, type Session } from "../packages/toolrelay/src/index.js";
import { createSessionOnLink } from "../packages/toolrelay/src/session/create-session.js";
import { LocalLink } from "../packages/toolrelay/src/transport/local-link.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { connectRawPeerClient } from "../test/support/raw-peer-client.js";
import { startScriptedModelServer, type ModelRequest, type ScriptedModelServer } from "../test/support/scripted-model-server.js";

let model: ScriptedModelServer;
let server: LettaAppServer;
const sessions: Session[] = [];

beforeAll(async () => {
  model = await startScriptedModelServer();
  server = await startLettaAppServer({ modelUrl: model.url });
}, 60_000);

afterAll(async () => {
  for (const session of sessions.splice(0)) await session.close();
  await server?.stop();
  await model?.close();
});

beforeEach(() => model.resetScript());

async function open(tools: Parameters<typeof createSession>[0]["tools"]): Promise<Session> {
  const session = await createSession({
    backend: { kind: "local", url: server.url },
    agent: { create: { model: model.modelHandle, name: "toolrelay-contract" } },
    tools,
  });
  session.on("error", () => undefined);
  sessions.push(session);
  return session;
}

describe("the contract against the real app-server", () => {
  it("a provider that numbers every call call_0: each turn's call runs once, with its own input and its own answer", async () => {
    const reads: string[] = [];
    const readFile = defineTool({
      name: "read_file",
      description: "Reads a file",
      inputSchema: z.object({ path: z.string() }),
      execute: ({ path }) => {
        reads.push(path);
        return `contents of ${path}`;
      },
    });
    const asked = new Map<string, number>();
    model.setScript((request: ModelRequest) => {
      if (request.lastMessage?.role === "tool") return { text: `read: ${request.toolResults.map((result) => result.text).join("; ")}` };
      const path = request.lastUserText.includes("second") ? "b.txt" : "a.txt";
      // The runtime (0.32.18) shows the model no result for a reused call_0 and asks it again: a model
      // that answered call_0 every time would loop for ever (the turn never ends; the old idle rule
      // hid that by ending the turn on the runtime's idle loop status). It answers in text instead.
      asked.set(path, (asked.get(path) ?? 0) + 1);
      if ((asked.get(path) ?? 0) > 1) return { text: `no result for ${path}` };
      return { text: "Reading.", toolCalls: [{ id: "call_0", name: "read_file", arguments: { path } }] };
    });
    const session = await open([readFile]);
    const reused: unknown[] = [];
    const answers: string[] = [];
    session.on("tool-call-reused", (event) => reused.push(event));
    session.on("tool-call-end", (event) => {
      if (event.detail.kind === "ok") answers.push(event.detail.content.map((block) => (block.type === "text" ? block.text : "")).join(""));
    });
    const first = await session.send("read the first file").result;
    const turn2From = model.requests.length;
    const second = await session.send("read the second file").result;
    expect(reads).toEqual(["a.txt", "b.txt"]);
    expect(answers).toEqual(["contents of a.txt", "contents of b.txt"]);
    expect(reused).toHaveLength(1);
    expect(first.text).toContain("read: contents of a.txt");
    // The runtime's own history keeps one message per tool call id: the second call_0 and its result never
    // reach the model, which asks again (the same call, answered from the replay cache, never run again).
    const secondTurnRequests = model.requests.slice(turn2From);
    console.info(
      `call_0 reuse: turn 2 took ${secondTurnRequests.length} model requests, ended ${second.stopReason}; the tool ran ${reads.length} times`,
    );
    expect(secondTurnRequests.every((request) => !request.toolResults.some((result) => result.text.includes("b.txt")))).toBe(true);
    expect(second.stopReason).toBe("end_turn");
  }, 90_000);

  it("a thrown string reaches the model marked as a failure of the named tool, unlike a returned one", async () => {
    const thrower = defineTool({
      name: "flaky",
      description: "Fails",
      inputSchema: z.object({}),
      execute: () => {
        throw "boom";
      },
    });
    model.setScript((request: ModelRequest) =>
      request.lastMessage?.role === "tool" ? { text: "noted" } : { text: "Trying.", toolCalls: [{ name: "flaky", arguments: {} }] },
    );
    const session = await open([thrower]);
    const from = model.requests.length;
    await session.send("try it").result;
    const seen = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!.toolResults[0]!.text;
    expect(seen).toBe("Error: tool flaky failed: boom");
  }, 60_000);

  it("another client's pending approval survives a toolrelay session connecting, and that client answers it itself", async () => {
    model.setScript((request: ModelRequest) => {
      if (request.lastMessage?.role === "tool")
        return { text: `the owner said: ${request.toolResults.map((result) => result.text).join("; ")}` };
      return { text: "Asking.", toolCalls: [{ name: "ask_me", arguments: {} }] };
    });
    const from = model.requests.length;
    const raw = await connectRawPeerClient(server.url);
    try {
      const started = await raw.request(
        {
          type: "runtime_start",
          request_id: "raw-start",
          create_agent: { body: { name: "raw-owner", model: model.modelHandle } },
          create_conversation: {},
          mode: "standard",
          external_tools: [{ tools: [{ name: "ask_me", description: "Asks the person", parameters: { type: "object", properties: {} } }] }],
        },
        { responseType: "runtime_start_response", timeoutMs: 30_000 },
      );
      const runtime = (started as { runtime: { agent_id: string; conversation_id: string } }).runtime;
      raw.send({
        type: "input",
        request_id: "raw-input",
        runtime,
        payload: { kind: "create_message", messages: [{ role: "user", content: "ask me", client_message_id: "raw-message-1" }] },
      });
      const approval = await raw.waitFor((frame) => frame.type === "control_request", {
        timeoutMs: 30_000,
        description: "the raw client's approval",
      });

      // A toolrelay session with no canUseTool connects: the runtime replays the pending approval to it on
      // connect (before createSession resolves). Its link is watched from the first frame on.
      const link = new LocalLink({ url: server.url });
      const replayed: string[] = [];
      const answeredByToolrelay: unknown[] = [];
      link.on("frame", (frame) => {
        if (frame.type === "control_request") replayed.push(frame.request_id);
      });
      const send = link.send.bind(link);
      link.send = (frame, trusted) => {
        if (frame.type === "input" && (frame.payload as { kind?: string }).kind === "approval_response") answeredByToolrelay.push(frame);
        return send(frame, trusted);
      };
      const session = await createSessionOnLink({
        backend: { kind: "link", link },
        agent: { create: { model: model.modelHandle, name: "toolrelay-bystander" } },
      });
      sessions.push(session);
      session.on("error", () => undefined);
      await expect.poll(() => replayed.filter((id) => id === approval.request_id).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
      console.info(
        `the runtime replayed the other client's approval to the toolrelay session ${replayed.filter((id) => id === approval.request_id).length} time(s)`,
      );
      expect(answeredByToolrelay).toEqual([]);

      // The owner answers: allowed; its tool call comes to it, and the model reads its answer (not a denial).
      const answeredFrom = raw.received.length;
      raw.send({
        type: "input",
        request_id: "raw-approval",
        runtime,
        payload: { kind: "approval_response", request_id: approval.request_id, decision: { behavior: "allow" } },
      });
      const call = await raw.waitFor((frame) => frame.type === "external_tool_call_request", {
        timeoutMs: 30_000,
        fromIndex: answeredFrom,
      });
      raw.send({
        type: "external_tool_call_response",
        request_id: call.request_id,
        result: { content: [{ type: "text", text: "approved-by-its-owner" }] },
      });
      await raw.waitFor((frame) => frame.type === "turn_finished", {
        timeoutMs: 30_000,
        fromIndex: answeredFrom,
        description: "the raw turn's end",
      });
      const toolResult = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!.toolResults[0]!.text;
      expect(toolResult).toBe("approved-by-its-owner");
      expect(answeredByToolrelay).toEqual([]);
    } finally {
      await raw.close();
    }
  }, 90_000);
});
