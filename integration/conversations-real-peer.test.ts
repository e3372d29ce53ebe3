/**
 * Conversations shaped like real ones against the REAL Letta Code app-server (0.32.18, local
 * backend) with a scripted model that takes real time per reply: several turns in a row with no
 * pause, an abort while the model is still answering, a provider that numbers every call
 * `call_0`, and close() in the middle of a burst of tool calls. Each test here failed before the
 * fix it names (issue 23).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type Session } from "../packages/toolrelay/src/index.js";
import { createSessionOnLink } from "../packages/toolrelay/src/session/create-session.js";
import type { LinkSessionOptions } from "../packages/toolrelay/src/session/session-options.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ModelRequest, type ScriptedModelServer } from "../test/support/scripted-model-server.js";

let model: ScriptedModelServer;
let server: LettaAppServer;
const sessions: Session[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  model = await startScriptedModelServer();
  server = await startLettaAppServer({ modelUrl: model.url });
}, 60_000);

afterAll(async () => {
  for (const session of sessions.splice(0)) await session.close();
  await server?.stop();
  await model?.close();
});

beforeEach(() => {
  model.resetScript();
});

async function open(options: Partial<LinkSessionOptions>): Promise<Session> {
  const session = await createSessionOnLink({
    backend: { kind: "local", url: server.url },
    agent: { create: { model: model.modelHandle, name: "toolrelay-conversations" } },
    ...options,
  });
  session.on("error", () => undefined);
  sessions.push(session);
  return session;
}

/** The number in the user's "turn N". */
const turnOf = (request: ModelRequest) => Number(/turn (\d+)/.exec(request.lastUserText)?.[1] ?? 0);

describe("conversations against the real app-server", () => {
  it("three send()s back to back with a model that takes 1.5 s per reply: each turn's text is the model's final text", async () => {
    const runs: number[] = [];
    const work = defineTool({
      name: "work",
      description: "Does work",
      inputSchema: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        runs.push(n);
        await sleep(400);
        return `worked ${n}`;
      },
    });
    model.setScript((request) => {
      if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults[0]!.text}`, delayMs: 1_500 };
      return { text: "Working on it.", toolCalls: [{ name: "work", arguments: { n: turnOf(request) } }], delayMs: 1_500 };
    });
    const session = await open({ tools: [work] });
    for (const n of [1, 2, 3]) {
      const result = await session.send(`turn ${n}`).result;
      expect(result.stopReason, `turn ${n}`).toBe("end_turn");
      expect(result.text, `turn ${n}`).toBe(`Working on it.done: worked ${n}`);
    }
    expect(runs).toEqual([1, 2, 3]);
  }, 60_000);

  it("abort() while the model is still answering: the runtime's late end (no run_id) ends that turn, and the next turn gets its own real answer", async () => {
    model.setScript((request) => ({ text: `answer to turn ${turnOf(request)}`, delayMs: 2_500 }));
    const session = await open({});
    const first = session.send("turn 1");
    await sleep(600);
    await first.abort();
    expect((await first.result).stopReason).toBe("cancelled");
    const second = await session.send("turn 2").result;
    expect(second.stopReason).toBe("end_turn");
    expect(second.text).toBe("answer to turn 2");
    const third = await session.send("turn 3").result;
    expect(third.text).toBe("answer to turn 3");
  }, 60_000);

  it("a provider that numbers every call call_0: a later turn's call_0 with the same arguments runs the tool again and is answered with its own result", async () => {
    let runs = 0;
    const stamp = defineTool({
      name: "stamp",
      description: "Returns a fresh stamp",
      inputSchema: z.object({ label: z.string() }),
      execute: ({ label }) => `${label}-${++runs}`,
    });
    const asked = new Map<number, number>();
    model.setScript((request) => {
      const turn = turnOf(request);
      asked.set(turn, (asked.get(turn) ?? 0) + 1);
      // The first reply of each turn calls the tool as `call_0`; the model's next request ends the
      // turn. (From turn 2 on the runtime 0.32.18 shows the model "No result provided" for a reused
      // call_0 although the client's answer was right: a runtime-side fault, see docs/settlement.md.)
      if ((asked.get(turn) ?? 0) > 1) return { text: `turn ${turn} done` };
      return { toolCalls: [{ id: "call_0", name: "stamp", arguments: { label: turn === 2 ? "other" : "same" } }] };
    });
    const session = await open({ tools: [stamp] });
    const reused: string[] = [];
    session.on("tool-call-reused", (event) => reused.push(event.toolCallId));
    const results = [];
    for (const n of [1, 2, 3]) results.push(await session.send(`turn ${n}`).result);
    // What the runtime got back for each call (its tool_return_message): each call's own result.
    const returned = results.map((result) => result.events.find((event) => event.type === "tool-result"));
    expect(returned.map((event) => (event?.type === "tool-result" ? event.text : undefined))).toEqual(["same-1", "other-2", "same-3"]);
    expect(runs).toBe(3);
    expect(reused).toEqual(["call_0", "call_0"]);
    expect(results.map((result) => result.stopReason)).toEqual(["end_turn", "end_turn", "end_turn"]);
  }, 60_000);

  it("close() in the middle of a burst: every tool call request that reaches the session before its socket closes is answered", async () => {
    const entered: string[] = [];
    const slow = defineTool({
      name: "slow_step",
      description: "A slow step",
      inputSchema: z.object({ step: z.number() }),
      execute: async ({ step }, { signal }) => {
        entered.push(String(step));
        await new Promise((resolve) => signal.addEventListener("abort", resolve));
        return `step ${step}`;
      },
    });
    model.setScript((request) => {
      if (request.lastMessage?.role === "tool") return { text: "after the burst" };
      return {
        toolCalls: [1, 2, 3, 4].map((step) => ({ name: "slow_step", arguments: { step } })),
      };
    });
    const session = await open({ tools: [slow] });
    const requests: string[] = [];
    const answered = new Set<string>();
    session.on("tool-call-start", (event) => requests.push(event.requestId));
    session.on("tool-call-refused", (event) => {
      requests.push(event.requestId);
      answered.add(event.requestId);
    });
    session.on("tool-call-end", (event) => {
      for (const id of event.requestIds) answered.add(id);
    });
    const turn = session.send("burst");
    turn.result.catch(() => undefined);
    await expect.poll(() => entered.length, { timeout: 20_000 }).toBe(1);
    await session.close();
    // The first was answered cancelled by close(); the runtime then sent the next ones onto the
    // closing socket a few ms later, and each of those was answered too.
    expect(requests.length).toBeGreaterThan(1);
    expect([...requests].filter((id) => !answered.has(id))).toEqual([]);
    // The runtime had an answer for all four: it never settled one itself ("Listener connection closed").
    const followUp = await model.waitForRequest((request) => request.lastMessage?.role === "tool" && request.lastUserText === "burst", {
      timeoutMs: 10_000,
    });
    expect(followUp.toolResults.map((result) => result.text)).toEqual(
      Array.from({ length: 4 }, () => "External tool execution error: Tool call cancelled: the session was closed"),
    );
  }, 60_000);
});
