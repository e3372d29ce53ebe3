/**
 * fromAiSdkTools() with tools made by the real `ai` package (6.x): zod, jsonSchema() with and
 * without validate, a Standard Schema, streaming execute, toModelOutput, the call's signal.
 */
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { jsonSchema, tool } from "ai";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { executeTool as executeWithCallback, fromAiSdkTools, type ToolCallContext } from "../../packages/toolrelay/src/tools/index.js";
import type { ClientTool, ExecutionOutcome } from "../../packages/toolrelay/src/tools/index.js";

const executeTool = (tool: ClientTool, input: unknown, callContext: ToolCallContext): Promise<ExecutionOutcome> =>
  new Promise((resolve) => executeWithCallback(tool, input, callContext, 32_000, (_token, outcome) => resolve(outcome), undefined));

function context(signal = new AbortController().signal): ToolCallContext {
  return { signal, toolCallId: "call-7", agentId: "agent", conversationId: "conv", idempotencyKey: "tr1_test", progress: () => undefined };
}

describe("fromAiSdkTools", () => {
  it("turns a zod tool into a client tool named by its key: description, schema, validation and execute carried over", async () => {
    let seen: unknown;
    const [weather] = fromAiSdkTools(
      {
        get_weather: tool({
          description: "Current weather for a city",
          inputSchema: z.object({ city: z.string().min(1).describe("City name") }),
          execute: async ({ city }, options) => {
            seen = { toolCallId: options.toolCallId, messages: options.messages, signal: options.abortSignal instanceof AbortSignal };
            return { city, forecast: "sunny" };
          },
        }),
      },
      { annotations: { get_weather: { readOnlyHint: true } }, timeoutMs: 10_000 },
    );
    expect(weather).toMatchObject({ name: "get_weather", description: "Current weather for a city", inputKind: "zod", timeoutMs: 10_000 });
    expect(weather!.annotations).toEqual({ readOnlyHint: true });
    expect(weather!.jsonSchema).toEqual({
      type: "object",
      properties: { city: { type: "string", minLength: 1, description: "City name" } },
      required: ["city"],
    });
    expect(weather!.validateInput({ city: "" })).toMatchObject({ ok: false, issues: [{ path: "city" }] });
    const outcome = await executeTool(weather!, { city: "Oslo" }, context());
    expect(outcome).toEqual({
      kind: "ok",
      content: [{ type: "text", text: JSON.stringify({ city: "Oslo", forecast: "sunny" }, null, 2) }],
      output: { city: "Oslo", forecast: "sunny" },
    });
    expect(seen).toEqual({ toolCallId: "call-7", messages: [], signal: true });
  });

  it("jsonSchema() with validate: advertised as given, the AI SDK validator decides", async () => {
    const [add] = fromAiSdkTools({
      add: tool({
        description: "Adds two numbers",
        inputSchema: jsonSchema<{ a: number; b: number }>(
          { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
          {
            validate: (value) =>
              typeof (value as { a?: unknown }).a === "number"
                ? { success: true, value: value as { a: number; b: number } }
                : { success: false, error: new Error("a must be a number") },
          },
        ),
        execute: ({ a, b }) => a + b,
      }),
    });
    expect(add!.jsonSchema).toEqual({ type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] });
    expect(add!.validateInput({ a: "1", b: 2 })).toEqual({ ok: false, issues: [{ path: "(root)", message: "a must be a number" }] });
    expect(await executeTool(add!, { a: 1, b: 2 }, context())).toEqual({ kind: "ok", content: [{ type: "text", text: "3" }], output: 3 });
  });

  it("jsonSchema() without validate only advertises, as in the AI SDK; a valibot Standard Schema validates", () => {
    const [raw, ship] = fromAiSdkTools({
      raw: tool({
        description: "Raw",
        inputSchema: jsonSchema({ type: "object", properties: { n: { type: "number" } } }),
        execute: () => "ok",
      }),
      ship: tool({
        description: "Ships",
        inputSchema: toStandardJsonSchema(v.object({ kg: v.pipe(v.number(), v.maxValue(30)) })),
        execute: () => "ok",
      }),
    });
    expect(raw!.validateInput({ n: "not a number" })).toEqual({ ok: true, value: { n: "not a number" } });
    expect(ship!.inputKind).toBe("standard-schema");
    expect(ship!.validateInput({ kg: 31 })).toMatchObject({ ok: false, issues: [{ path: "kg" }] });
  });

  it("a streaming execute sends its last value; toModelOutput shapes what the model reads", async () => {
    const [progress, shaped, failing] = fromAiSdkTools({
      progress: tool({
        description: "Streams",
        inputSchema: z.object({}),
        async *execute() {
          yield "starting";
          yield "finished";
        },
      }),
      shaped: tool({
        description: "Shaped",
        inputSchema: z.object({}),
        execute: () => ({ rows: 3 }),
        toModelOutput: ({ output }) => ({ type: "content", value: [{ type: "text", text: `${(output as { rows: number }).rows} rows` }] }),
      }),
      failing: tool({
        description: "Fails",
        inputSchema: z.object({}),
        execute: () => "x",
        toModelOutput: () => ({ type: "error-text", value: "quota exceeded" }),
      }),
    });
    expect(await executeTool(progress!, {}, context())).toEqual({
      kind: "ok",
      content: [{ type: "text", text: "finished" }],
      output: "finished",
    });
    expect(await executeTool(shaped!, {}, context())).toMatchObject({ kind: "ok", content: [{ type: "text", text: "3 rows" }] });
    expect(await executeTool(failing!, {}, context())).toEqual({
      kind: "tool-error",
      message: "quota exceeded",
      content: [{ type: "text", text: "Error: tool failing reported an error: quota exceeded" }],
    });
  });

  it("refuses a tool without execute, and a non-schema inputSchema", () => {
    expect(() => fromAiSdkTools({ client_side: tool({ description: "Runs in the browser", inputSchema: z.object({}) }) })).toThrow(
      expect.objectContaining({
        code: "INVALID_TOOL_DEFINITION",
        message: expect.stringContaining('AI SDK tool "client_side": has no execute function'),
      }),
    );
    expect(() => fromAiSdkTools({ odd: { description: "d", inputSchema: 42, execute: () => "" } })).toThrow(
      expect.objectContaining({ code: "INVALID_TOOL_DEFINITION", message: expect.stringContaining("inputSchema must be") }),
    );
  });
});
