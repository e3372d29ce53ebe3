/**
 * Results the app can read (issue 26) against the REAL Letta Code app-server (0.32.18, local
 * backend): a tool with an `outputSchema` and a `toModelOutput` returns an object; the app's
 * `tool-call-end` event (`output`) and the turn's `toolOutputs` carry that object (the schema's
 * output), while the model got `toModelOutput`'s text. A return value that fails the
 * `outputSchema` is a tool error the model reads, and the app's `output` is `undefined`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSession, defineTool, type ToolCallEndEvent } from "../packages/toolrelay/src/index.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ModelRequest, type ScriptedModelServer } from "../test/support/scripted-model-server.js";

let model: ScriptedModelServer;
let server: LettaAppServer;
const sessions: Array<{ close(): Promise<void> }> = [];

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

const orderSchema = z.object({
  id: z.string(),
  items: z.array(z.object({ sku: z.string(), cents: z.number().int() })),
  currency: z.enum(["EUR", "USD"]),
  placedAt: z.iso.datetime(),
});

/** `broken` returns a total that is not an integer, which the schema refuses. */
function orderTool(broken: { value: boolean }) {
  return defineTool({
    name: "lookup_order",
    description: "Look up an order",
    inputSchema: z.object({ id: z.string() }),
    outputSchema: orderSchema,
    toModelOutput: (order) =>
      `Order ${order.id}: ${order.items.length} items, ${order.items.reduce((sum, item) => sum + item.cents, 0)} cents ${order.currency}`,
    execute: ({ id }) => ({
      id,
      items: [
        { sku: "pen", cents: broken.value ? 1.5 : 150 },
        { sku: "ink", cents: 900 },
      ],
      currency: "EUR" as const,
      placedAt: "2026-12-01T10:00:00.000Z",
    }),
  });
}

describe("typed results (real app-server)", () => {
  it("tool-call-end's output and TurnResult.toolOutputs carry the tool's object; the model got toModelOutput's text", async () => {
    const lookup = orderTool({ value: false });
    const session = await createSession({
      backend: { kind: "local", url: server.url },
      agent: { create: { model: model.modelHandle, name: "toolrelay-typed-results" } },
      conversation: "new",
      tools: [lookup],
    });
    sessions.push(session);
    const ends: ToolCallEndEvent[] = [];
    session.on("tool-call-end", (event) => ends.push(event));
    model.setScript((request: ModelRequest) => {
      if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}` };
      return { toolCalls: [{ id: "lookup_1", name: "lookup_order", arguments: { id: "A-17" } }] };
    });
    const from = model.requests.length;
    const result = await session.send("look up order A-17").result;

    const expected = {
      id: "A-17",
      items: [
        { sku: "pen", cents: 150 },
        { sku: "ink", cents: 900 },
      ],
      currency: "EUR",
      placedAt: "2026-12-01T10:00:00.000Z",
    };
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ toolName: "lookup_order", toolCallId: "lookup_1", outcome: "ok" });
    expect(ends[0]!.output).toEqual(expected);
    expect(ends[0]!.output).toBeTypeOf("object");
    expect(result.toolOutputs).toEqual([{ toolCallId: "lookup_1", toolName: "lookup_order", output: expected }]);
    // Typed by the tool (the compile-time side is test/tools/typed-output.test-d.ts): no cast to read a field.
    expect(result.toolOutputs[0]?.output?.items[1]?.sku).toBe("ink");
    const modelText = "Order A-17: 2 items, 1050 cents EUR";
    const followUp = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!;
    expect(followUp.toolResults.map((entry) => entry.text)).toEqual([modelText]);
    expect(result.text).toBe(`done: ${modelText}`);
    const toolResult = result.events.find((event) => event.type === "tool-result");
    expect(toolResult).toMatchObject({ toolName: "lookup_order", isError: false });
  });

  it("a return value that fails outputSchema is a tool error the model reads; output is undefined and toolOutputs is empty", async () => {
    const broken = { value: true };
    const lookup = orderTool(broken);
    const session = await createSession({
      backend: { kind: "local", url: server.url },
      agent: { create: { model: model.modelHandle, name: "toolrelay-typed-results" } },
      conversation: "new",
      tools: [lookup],
    });
    sessions.push(session);
    const ends: ToolCallEndEvent[] = [];
    session.on("tool-call-end", (event) => ends.push(event));
    model.setScript((request: ModelRequest) => {
      if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}` };
      // A fresh id per turn: the runtime (0.32.18) keeps one exchange per tool call id in a conversation.
      return { toolCalls: [{ id: `lookup_${request.index}`, name: "lookup_order", arguments: { id: "B-2" } }] };
    });
    const from = model.requests.length;
    const result = await session.send("look up order B-2").result;

    const refused =
      "Error: tool lookup_order failed: the result does not match the tool's outputSchema:\n- items[0].cents: Invalid input: expected int, received number";
    const followUp = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!;
    expect(followUp.toolResults.map((entry) => entry.text)).toEqual([refused]);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ outcome: "tool-error", output: undefined });
    expect(result.toolOutputs).toEqual([]);
    const toolResult = result.events.find((event) => event.type === "tool-result");
    expect(toolResult).toMatchObject({ toolName: "lookup_order", isError: true });

    // The same conversation goes on: the next call returns a valid object and the app reads it.
    broken.value = false;
    const next = await session.send("look up order B-2 again").result;
    expect(next.toolOutputs.map((entry) => entry.output?.items[0]?.cents)).toEqual([150]);
  });
});
