/**
 * `ctx.idempotencyKey` against the REAL Letta Code app-server (0.32.18, local backend): the
 * scripted model names every tool call `call_0` (providers reuse such ids), also with the same
 * input, across the turns of one conversation. Each of those is a new model request: the runtime
 * gives it a new request id, the call runs again, and its key is new. A ledger (one row per
 * execution) shows what ran with which key.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSession, defineTool, type Session, type ToolCallEndEvent } from "../packages/toolrelay/src/index.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ModelRequest, type ScriptedModelServer } from "../test/support/scripted-model-server.js";

let model: ScriptedModelServer;
let server: LettaAppServer;
let session: Session | undefined;

beforeAll(async () => {
  model = await startScriptedModelServer();
  server = await startLettaAppServer({ modelUrl: model.url });
}, 60_000);

afterAll(async () => {
  await session?.close();
  await server?.stop();
  await model?.close();
});

describe("ctx.idempotencyKey (real app-server)", () => {
  it("differs across turns that reuse call_0, with the same input and with another; equal to what the approver saw", async () => {
    const ledger: Array<{ toolCallId: string; input: string; key: string }> = [];
    const approved: string[] = [];
    const charge = defineTool({
      name: "charge",
      description: "Charge a card",
      inputSchema: z.object({ cents: z.number().int() }),
      needsApproval: ({ cents }) => cents >= 1_000,
      execute: ({ cents }, context) => {
        ledger.push({ toolCallId: context.toolCallId, input: JSON.stringify({ cents }), key: context.idempotencyKey });
        return `charged ${cents}`;
      },
    });
    session = await createSession({
      backend: { kind: "local", url: server.url },
      agent: { create: { model: model.modelHandle, name: "toolrelay-idempotency-key" } },
      conversation: "new",
      tools: [charge],
      canUseTool: (request) => {
        approved.push(request.idempotencyKey!);
        return { behavior: "allow" };
      },
    });
    const ends: ToolCallEndEvent[] = [];
    session.on("tool-call-end", (event) => ends.push(event));
    // The first model request of each turn calls `call_0`; the next one ends the turn. (From the
    // second turn on, the runtime 0.32.18 shows the model no result for a reused call_0, so the
    // model's follow-up is not keyed on a tool result: see integration/conversations-real-peer.test.ts.)
    const asked = new Map<string, number>();
    model.setScript((request: ModelRequest) => {
      const user = request.lastUserText;
      asked.set(user, (asked.get(user) ?? 0) + 1);
      if (asked.get(user)! > 1) return { text: `${user}: done`, delayMs: 500 };
      return { toolCalls: [{ id: "call_0", name: "charge", arguments: { cents: Number(/charge (\d+)/.exec(user)![1]) } }], delayMs: 1_000 };
    });

    const amounts = [250, 250, 1_200, 250];
    const returned: Array<string | undefined> = [];
    for (const [turn, cents] of amounts.entries()) {
      const result = await session.send(`turn ${turn}: charge ${cents}`).result;
      expect(result.stopReason).toBe("end_turn");
      const toolResult = result.events.find((event) => event.type === "tool-result");
      returned.push(toolResult?.type === "tool-result" ? toolResult.text : undefined);
    }
    // What the runtime got back for each call: its own answer.
    expect(returned).toEqual(amounts.map((cents) => `charged ${cents}`));

    expect(ledger.map((row) => [row.toolCallId, row.input])).toEqual(amounts.map((cents) => ["call_0", JSON.stringify({ cents })]));
    const keys = ledger.map((row) => row.key);
    for (const key of keys) expect(key).toMatch(/^tr1_[A-Za-z0-9_-]{43}$/);
    expect(new Set(keys).size).toBe(amounts.length);
    // The approver saw the key execute got.
    expect(approved).toEqual([keys[2]]);
    // Each call ran once, under its own request id.
    expect(ends.map((end) => end.outcome)).toEqual(["ok", "ok", "ok", "ok"]);
    expect(new Set(ends.flatMap((end) => end.requestIds)).size).toBe(4);
  }, 60_000);
});
