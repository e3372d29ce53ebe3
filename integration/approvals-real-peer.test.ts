/**
 * Client tools that ask first (`needsApproval`, issue 26) against the REAL Letta Code app-server
 * (0.32.18, local backend) and a scripted model that takes 1–2 s per reply for the multi-turn
 * conversations. The session answers through its one `canUseTool` callback (`kind: "client-tool"`):
 * a call runs only when allowed; a declined or unanswered one is not run and the model's next
 * request carries the denial text (`deniedText`, calls/call-outcome.ts) as the call's result; an
 * approver's `updatedInput` is validated again; a needsApproval function asks only when it says so;
 * inside a burst of three calls the middle one waits for its approval and every call is answered
 * once, in the model's order.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { deniedText } from "../packages/toolrelay/src/calls/index.js";
import {
  createSession,
  defineTool,
  type ApprovalDecision,
  type ApprovalRequest,
  type Session,
  type SessionOptions,
  type ToolCallEndEvent,
} from "../packages/toolrelay/src/index.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import {
  startScriptedModelServer,
  type ModelRequest,
  type ScriptedModelServer,
  type ScriptedToolCall,
} from "../test/support/scripted-model-server.js";

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

beforeEach(() => {
  model.resetScript();
});

/**
 * A model that answers a user message with the tool calls `plan` gives for its text, and a tool
 * result with `done: <the results>`; `delayMs` per reply (a model that thinks a while).
 */
function scriptCalls(plan: (userText: string) => ScriptedToolCall[], delayMs = 0): void {
  model.setScript((request: ModelRequest) => {
    if (request.lastMessage?.role === "tool")
      return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}`, delayMs };
    return { toolCalls: plan(request.lastUserText), delayMs };
  });
}

/** The model request that carried the results of the user message sent after `from`: its tool results, in order. */
function followUps(from: number): ModelRequest[] {
  return model.requests.slice(from).filter((request) => request.lastMessage?.role === "tool");
}

async function open(options: Partial<SessionOptions>): Promise<{ session: Session; ends: ToolCallEndEvent[] }> {
  const session = await createSession({
    backend: { kind: "local", url: server.url },
    agent: { create: { model: model.modelHandle, name: "toolrelay-approvals" } },
    conversation: "new",
    ...options,
  } as SessionOptions);
  sessions.push(session);
  const ends: ToolCallEndEvent[] = [];
  session.on("tool-call-end", (event) => ends.push(event));
  return { session, ends };
}

/** `wipe` asks every time; its input has a default, so the approver sees the validated input. */
function wipeTool(order?: string[]) {
  const runs: Array<{ input: { target: string; force: boolean }; idempotencyKey: string }> = [];
  const tool = defineTool({
    name: "wipe",
    description: "Delete everything in a target",
    inputSchema: z.object({ target: z.string(), force: z.boolean().default(false) }),
    annotations: { title: "Wipe a target", destructiveHint: true },
    needsApproval: true,
    execute: (input, context) => {
      runs.push({ input, idempotencyKey: context.idempotencyKey });
      order?.push(`wipe ${input.target}`);
      return `wiped ${input.target}`;
    },
  });
  return { tool, runs };
}

describe("client tools that ask first (real app-server)", () => {
  it("asks canUseTool with kind client-tool, the validated input, the annotations and the idempotency key, and runs only when allowed", async () => {
    const { tool, runs } = wipeTool();
    const asked: ApprovalRequest[] = [];
    const { session, ends } = await open({
      tools: [tool],
      canUseTool: (request) => {
        asked.push(request);
        return { behavior: "allow" };
      },
    });
    scriptCalls(() => [{ name: "wipe", arguments: { target: "cache" } }]);
    const from = model.requests.length;
    const result = await session.send("wipe the cache").result;

    expect(result.stopReason).toBe("end_turn");
    expect(asked).toHaveLength(1);
    const request = asked[0]!;
    expect(request).toMatchObject({
      kind: "client-tool",
      toolName: "wipe",
      input: { target: "cache", force: false },
      annotations: { title: "Wipe a target", destructiveHint: true },
      suggestions: [],
    });
    expect(request.requestId).toMatch(/^external-tool-/);
    expect(request.idempotencyKey).toMatch(/^tr1_[A-Za-z0-9_-]{43}$/);
    expect(runs).toEqual([{ input: { target: "cache", force: false }, idempotencyKey: request.idempotencyKey }]);
    expect(request.signal.aborted).toBe(false);
    expect(followUps(from)[0]!.toolResults.map((entry) => entry.text)).toEqual(["wiped cache"]);
    expect(ends.map((end) => end.outcome)).toEqual(["ok"]);
  });

  it("declined: execute never runs, the model reads the declined text (not an error) and the turn goes on", async () => {
    const { tool, runs } = wipeTool();
    const { session, ends } = await open({
      tools: [tool],
      canUseTool: () => ({ behavior: "deny", message: "not the production database" }),
    });
    scriptCalls(() => [{ name: "wipe", arguments: { target: "production" } }]);
    const from = model.requests.length;
    const result = await session.send("wipe production").result;

    const declined = deniedText("wipe", { kind: "denied", reason: "declined", message: "not the production database" });
    expect(declined).toBe("The user declined this call of tool wipe; it was not run. The user said: not the production database");
    expect(runs).toEqual([]);
    expect(followUps(from)[0]!.toolResults.map((entry) => entry.text)).toEqual([declined]);
    expect(result.text).toBe(`done: ${declined}`);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ outcome: "denied", output: undefined, detail: { kind: "denied", reason: "declined" } });
    expect(result.toolOutputs).toEqual([]);
    const toolResult = result.events.find((event) => event.type === "tool-result");
    expect(toolResult).toMatchObject({ toolName: "wipe", owner: "client", isError: false });
  });

  it("unanswered: denied after approvalTimeoutMs with the timeout text, the approver's signal fires, execute never runs", async () => {
    const { tool, runs } = wipeTool();
    const asked: ApprovalRequest[] = [];
    const { session, ends } = await open({
      tools: [tool],
      approvalTimeoutMs: 2_000,
      canUseTool: (request) => {
        asked.push(request);
        return new Promise<ApprovalDecision>(() => undefined); // a prompt nobody answers
      },
    });
    scriptCalls(() => [{ name: "wipe", arguments: { target: "logs" } }]);
    const from = model.requests.length;
    const sentAt = Date.now();
    const result = await session.send("wipe the logs").result;
    const waited = Date.now() - sentAt;

    const timedOut = deniedText("wipe", { kind: "denied", reason: "timeout", message: "2 s" });
    expect(timedOut).toBe("Tool wipe was not run: it needs the user's approval and nobody answered in time (2 s).");
    expect(asked).toHaveLength(1);
    expect(asked[0]!.signal.aborted).toBe(true);
    expect(runs).toEqual([]);
    expect(followUps(from)[0]!.toolResults.map((entry) => entry.text)).toEqual([timedOut]);
    expect(ends[0]).toMatchObject({ outcome: "denied", detail: { kind: "denied", reason: "timeout", message: "2 s" } });
    expect(waited).toBeGreaterThanOrEqual(2_000);
    expect(result.stopReason).toBe("end_turn");
  });

  it("an approver's updatedInput is validated again: an invalid one is refused as invalid input and not run; a valid one runs as replaced", async () => {
    const { tool, runs } = wipeTool();
    let replacement: Record<string, unknown> = { target: 42 };
    const { session, ends } = await open({ tools: [tool], canUseTool: () => ({ behavior: "allow", updatedInput: replacement }) });
    scriptCalls(() => [{ name: "wipe", arguments: { target: "tmp" } }], 1_000);

    let from = model.requests.length;
    await session.send("wipe tmp").result;
    expect(runs).toEqual([]);
    const refused = followUps(from)[0]!.toolResults[0]!.text;
    expect(refused).toBe(
      "Error: invalid input for tool wipe:\n- target: Invalid input: expected string, received number\nFix the arguments and call again.",
    );
    expect(ends[0]).toMatchObject({ outcome: "invalid-input" });

    replacement = { target: "tmp/old", force: true };
    from = model.requests.length;
    await session.send("wipe tmp again").result;
    expect(runs.map((run) => run.input)).toEqual([{ target: "tmp/old", force: true }]);
    expect(followUps(from)[0]!.toolResults.map((entry) => entry.text)).toEqual(["wiped tmp/old"]);
    expect(ends.map((end) => end.outcome)).toEqual(["invalid-input", "ok"]);
  });

  it("a needsApproval function: small amounts run unasked, large ones ask (denied, then allowed) over a multi-turn conversation with a slow model", async () => {
    const transfers: number[] = [];
    const checked: number[] = [];
    const transfer = defineTool({
      name: "transfer",
      description: "Send money",
      inputSchema: z.object({ amount: z.number().int().positive(), to: z.string() }),
      annotations: { destructiveHint: true, openWorldHint: true },
      needsApproval: async ({ amount }, context) => {
        checked.push(amount);
        expect(context.idempotencyKey).toMatch(/^tr1_/);
        return amount > 100;
      },
      execute: ({ amount, to }) => {
        transfers.push(amount);
        return `sent ${amount} to ${to}`;
      },
    });
    const asked: number[] = [];
    let allow = false;
    const { session } = await open({
      tools: [transfer],
      canUseTool: (request) => {
        asked.push(request.input.amount as number);
        return allow ? { behavior: "allow" } : { behavior: "deny", message: "too much" };
      },
    });
    scriptCalls((text) => [{ name: "transfer", arguments: { amount: Number(/\d+/.exec(text)![0]), to: "ada" } }], 1_500);

    const texts: string[] = [];
    for (const amount of [5, 500, 20]) texts.push((await session.send(`send ${amount} to ada`).result).text);
    allow = true;
    texts.push((await session.send("send 700 to ada").result).text);

    expect(checked).toEqual([5, 500, 20, 700]);
    expect(asked).toEqual([500, 700]);
    expect(transfers).toEqual([5, 20, 700]);
    expect(texts).toEqual([
      "done: sent 5 to ada",
      `done: ${deniedText("transfer", { kind: "denied", reason: "declined", message: "too much" })}`,
      "done: sent 20 to ada",
      "done: sent 700 to ada",
    ]);
  }, 60_000);

  it("a burst of three calls whose middle one asks: it waits for its approval, the order is kept and every call is answered once", async () => {
    const order: string[] = [];
    const note = defineTool({
      name: "note",
      description: "Write a note",
      inputSchema: z.object({ text: z.string() }),
      execute: ({ text }) => {
        order.push(`note ${text}`);
        return `noted ${text}`;
      },
    });
    const { tool, runs } = wipeTool(order);
    const asked: string[] = [];
    const { session, ends } = await open({
      tools: [note, tool],
      canUseTool: async (request) => {
        asked.push(String(request.input.target));
        order.push("asked");
        await new Promise((resolve) => setTimeout(resolve, 800));
        order.push("allowed");
        return { behavior: "allow" };
      },
    });
    scriptCalls(
      () => [
        { id: "burst_a", name: "note", arguments: { text: "a" } },
        { id: "burst_b", name: "wipe", arguments: { target: "b" } },
        { id: "burst_c", name: "note", arguments: { text: "c" } },
      ],
      1_000,
    );
    const from = model.requests.length;
    const result = await session.send("three things").result;

    expect(result.stopReason).toBe("end_turn");
    expect(asked).toEqual(["b"]);
    expect(runs.map((run) => run.input.target)).toEqual(["b"]);
    const results = followUps(from);
    expect(results).toHaveLength(1);
    expect(results[0]!.toolResults.map((entry) => [entry.toolCallId, entry.text])).toEqual([
      ["burst_a", "noted a"],
      ["burst_b", "wiped b"],
      ["burst_c", "noted c"],
    ]);
    // Each call ended once, ok; the wipe ran only after it was allowed.
    expect(ends.map((end) => [end.toolCallId, end.outcome]).sort()).toEqual([
      ["burst_a", "ok"],
      ["burst_b", "ok"],
      ["burst_c", "ok"],
    ]);
    expect(ends.flatMap((end) => end.requestIds)).toHaveLength(3);
    // The runtime sends a response's client tool calls one at a time (measured on 0.32.18): the
    // third waits for the second, which waits for its approval.
    expect(order).toEqual(["note a", "asked", "allowed", "wipe b", "note c"]);
    const toolResults = result.events.filter((event) => event.type === "tool-result");
    expect(toolResults).toHaveLength(3);
  }, 60_000);
});
