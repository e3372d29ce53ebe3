/**
 * JSON Schema and Standard Schema (valibot) tools against the REAL Letta Code app-server
 * (0.32.18): what the runtime offers the model keeps every description, type, bound, enum,
 * default and required name; bad input is refused with the failing path (or passed through as
 * sent with validate: false); and the advertised timeout_ms is accepted (the tool is offered and
 * called).
 */
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { tool } from "ai";
import { z } from "zod";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { defineTool, fromAiSdkTools, type Session } from "../packages/toolrelay/src/index.js";
import { createSessionOnLink } from "../packages/toolrelay/src/session/create-session.js";
import type { LinkSessionOptions } from "../packages/toolrelay/src/session/session-options.js";
import type { OutboundFrame } from "../packages/toolrelay/src/wire/index.js";
import { LocalLink } from "../packages/toolrelay/src/transport/local-link.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { orderJsonSchema as orderSchema, shipmentValibot as shipment } from "../test/fixtures/tool-schemas.js";
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

async function open(options: Partial<LinkSessionOptions>): Promise<Session> {
  const session = await createSessionOnLink({
    backend: { kind: "local", url: server.url },
    agent: { create: { model: model.modelHandle, name: "toolrelay-schemas" } },
    ...options,
  });
  sessions.push(session);
  return session;
}

function callOnce(name: string, args: Record<string, unknown>) {
  return (request: ModelRequest) => {
    if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}` };
    return { toolCalls: [{ name, arguments: args }] };
  };
}

function lastToolResult(from: number): string {
  return model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!.toolResults[0]!.text;
}

function offeredParameters(from: number, name: string): Record<string, unknown> {
  return model.requests[from]!.tools.find((tool) => tool.function.name === name)!.function.parameters as Record<string, unknown>;
}

describe("JSON Schema and valibot tools against the real app-server", () => {
  it("a JSON Schema tool: the offered schema is the tool's, every keyword kept; bad input refused with the failing paths", async () => {
    let calls = 0;
    const order = defineTool({
      name: "place_order",
      description: "Places an order",
      inputSchema: orderSchema,
      execute: () => `placed ${++calls}`,
    });
    model.setScript(callOnce("place_order", { customer: { tier: "gold" }, items: [{ sku: "abc", quantity: 0 }] }));
    const session = await open({ tools: [order] });
    const from = model.requests.length;
    await session.send("order something").result;
    expect(offeredParameters(from, "place_order")).toEqual(orderSchema);
    expect(calls).toBe(0);
    expect(lastToolResult(from)).toBe(
      [
        "Error: invalid input for tool place_order:",
        "- customer.name: is required",
        '- customer.tier: must be one of "free", "pro", "enterprise"',
        '- items[0].sku: must match pattern "^[A-Z]{3}-\\d{3}$"',
        "- items[0].quantity: must be >= 1",
        "Fix the arguments and call again.",
      ].join("\n"),
    );
    model.setScript(callOnce("place_order", { customer: { name: "Ada" }, items: [{ sku: "ABC-123", quantity: 2 }] }));
    const next = model.requests.length;
    await session.send("order again").result;
    expect(lastToolResult(next)).toBe("placed 1");
  });

  it("a JSON Schema tool with validate: false: the same schema is offered and the handler gets the input exactly as sent", async () => {
    const received: unknown[] = [];
    const passthrough = defineTool({
      name: "place_order_raw",
      description: "Places an order (the host validates)",
      inputSchema: orderSchema,
      validate: false,
      execute: (input) => {
        received.push(input);
        return "host will check";
      },
    });
    const sent = { customer: { tier: "gold", nickname: "x" }, items: [{ sku: "abc", quantity: 0 }], extra: [1, 2] };
    model.setScript(callOnce("place_order_raw", sent));
    const session = await open({ tools: [passthrough] });
    const from = model.requests.length;
    await session.send("order raw").result;
    expect(offeredParameters(from, "place_order_raw")).toEqual(orderSchema);
    expect(received).toEqual([sent]);
    expect(lastToolResult(from)).toBe("host will check");
  });

  it("a valibot tool: the offered schema keeps nested objects, enums, bounds, defaults and required names; valibot refuses with paths", async () => {
    const shipped: unknown[] = [];
    const ship = defineTool({
      name: "ship_parcel",
      description: "Ships a parcel",
      inputSchema: toStandardJsonSchema(shipment),
      execute: (input) => {
        shipped.push(input);
        return `shipping to ${input.destination.city} by ${input.speed}`;
      },
    });
    model.setScript(callOnce("ship_parcel", { destination: { city: "", country: "FI" }, weightKg: 31 }));
    const session = await open({ tools: [ship] });
    const from = model.requests.length;
    await session.send("ship it").result;
    expect(offeredParameters(from, "ship_parcel")).toEqual({
      type: "object",
      properties: {
        destination: {
          type: "object",
          description: "Where the parcel goes",
          properties: {
            city: { type: "string", minLength: 1, maxLength: 60, description: "City to ship to" },
            country: { enum: ["NO", "SE", "DK"], type: "string", description: "ISO country code" },
          },
          required: ["city", "country"],
        },
        weightKg: { type: "number", minimum: 0.1, maximum: 30, description: "Weight in kilograms" },
        speed: { enum: ["economy", "express"], type: "string", default: "economy" },
      },
      required: ["destination", "weightKg"],
    });
    expect(offeredParameters(from, "ship_parcel")).toEqual(ship.jsonSchema);
    expect(shipped).toEqual([]);
    expect(lastToolResult(from)).toBe(
      [
        "Error: invalid input for tool ship_parcel:",
        "- destination.city: Invalid length: Expected >=1 but received 0",
        '- destination.country: Invalid type: Expected ("NO" | "SE" | "DK") but received "FI"',
        "- weightKg: Invalid value: Expected <=30 but received 31",
        "Fix the arguments and call again.",
      ].join("\n"),
    );
    model.setScript(callOnce("ship_parcel", { destination: { city: "Oslo", country: "NO" }, weightKg: 2 }));
    const next = model.requests.length;
    await session.send("ship it properly").result;
    expect(lastToolResult(next)).toBe("shipping to Oslo by economy");
    expect(shipped).toEqual([{ destination: { city: "Oslo", country: "NO" }, weightKg: 2, speed: "economy" }]);
  });

  it("a Vercel AI SDK tool (the real `ai` package) through fromAiSdkTools: offered with its schema, called, its output read by the model", async () => {
    const tools = fromAiSdkTools({
      convert_currency: tool({
        description: "Converts an amount between currencies",
        inputSchema: z.object({
          amount: z.number().positive().describe("How much"),
          to: z.enum(["EUR", "NOK"]).describe("Target currency"),
        }),
        execute: async ({ amount, to }) => ({ amount: amount * 2, currency: to }),
      }),
    });
    model.setScript(callOnce("convert_currency", { amount: 21, to: "NOK" }));
    const session = await open({ tools });
    const from = model.requests.length;
    await session.send("convert 21 to NOK").result;
    expect(offeredParameters(from, "convert_currency")).toEqual({
      type: "object",
      properties: {
        amount: { type: "number", exclusiveMinimum: 0, description: "How much" },
        to: { type: "string", enum: ["EUR", "NOK"], description: "Target currency" },
      },
      required: ["amount", "to"],
    });
    expect(JSON.parse(lastToolResult(from))).toEqual({ amount: 42, currency: "NOK" });
  });

  it("registers timeout_ms (the tool's own, or the session default, clamped); 0.32.18 still offers and calls the tool", async () => {
    const link = new LocalLink({ url: server.url });
    const frames: OutboundFrame[] = [];
    const send = link.send.bind(link);
    link.send = (frame) => {
      frames.push(frame);
      return send(frame);
    };
    const quick = defineTool({
      name: "quick_tool",
      description: "Answers quickly",
      inputSchema: { type: "object" },
      timeoutMs: 500,
      execute: () => "quick",
    });
    const normal = defineTool({
      name: "normal_tool",
      description: "Uses the session default",
      inputSchema: { type: "object" },
      execute: () => "normal",
    });
    const session = await open({ backend: { kind: "link", link }, tools: [quick, normal], toolTimeoutMs: 45_000 });
    const start = frames.find((frame) => frame.type === "runtime_start") as {
      external_tools: Array<{ tools: Array<{ name: string; timeout_ms: number }> }>;
    };
    expect(start.external_tools[0]!.tools.map((tool) => [tool.name, tool.timeout_ms])).toEqual([
      ["quick_tool", 1_000],
      ["normal_tool", 45_000],
    ]);
    model.setScript((request) => {
      const done = request.messages.filter((message) => message.role === "tool").length;
      if (done === 0) return { toolCalls: [{ name: "quick_tool", arguments: {} }] };
      if (done === 1) return { toolCalls: [{ name: "normal_tool", arguments: {} }] };
      return { text: `done: ${request.toolResults.map((result) => result.text).join(" ")}` };
    });
    const from = model.requests.length;
    const result = await session.send("use both").result;
    expect(model.requests[from]!.toolNames).toEqual(expect.arrayContaining(["quick_tool", "normal_tool"]));
    expect(result.text).toContain("done: normal");
    expect(model.requests.slice(from).flatMap((request) => request.toolResults.map((entry) => entry.text))).toEqual(["quick", "normal"]);
  });
});
