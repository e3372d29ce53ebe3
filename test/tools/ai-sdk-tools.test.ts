/**
 * fromAiSdkTools() with tools made by the real `ai` package (6.x): zod, jsonSchema() with and
 * without validate, a Standard Schema, streaming execute, the call's signal, and the AI SDK's
 * needsApproval, outputSchema and toModelOutput carried onto defineTool's own (the app's output is
 * the real return value, the model reads the mapped one); each bad option refused naming the tool.
 */
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { jsonSchema, tool } from "ai";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  executeTool as executeWithCallback,
  fromAiSdkTools,
  type ToolApprovalContext,
  type ToolCallContext,
} from "../../packages/toolrelay/src/tools/index.js";
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

  it("a streaming execute returns its last value; toModelOutput shapes what the model reads, the app's output is the real value", async () => {
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
        inputSchema: z.object({ table: z.string() }),
        execute: () => ({ rows: 3 }),
        toModelOutput: ({ output, input, toolCallId }) => ({
          type: "content",
          value: [{ type: "text", text: `${output.rows} rows in ${input.table} (${toolCallId})` }],
        }),
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
    expect(await executeTool(shaped!, { table: "users" }, context())).toEqual({
      kind: "ok",
      content: [{ type: "text", text: "3 rows in users (call-7)" }],
      output: { rows: 3 },
    });
    expect(await executeTool(failing!, {}, context())).toEqual({
      kind: "tool-error",
      message: "quota exceeded",
      content: [{ type: "text", text: "Error: tool failing reported an error: quota exceeded" }],
    });
  });

  it("needsApproval: a boolean is carried over; a function gets the validated input and { toolCallId, messages: [] }", async () => {
    const seen: unknown[] = [];
    const [always, never, unset, perCall] = fromAiSdkTools({
      always: tool({ description: "d", inputSchema: z.object({}), needsApproval: true, execute: () => "x" }),
      never: tool({ description: "d", inputSchema: z.object({}), needsApproval: false, execute: () => "x" }),
      unset: tool({ description: "d", inputSchema: z.object({}), execute: () => "x" }),
      per_call: tool({
        description: "Deletes rows",
        inputSchema: z.object({ rows: z.number().default(1) }),
        needsApproval: async (input, options) => {
          seen.push({ input, options });
          return input.rows > 10;
        },
        execute: () => "deleted",
      }),
    });
    expect([always!.needsApproval, never!.needsApproval, unset!.needsApproval]).toEqual([true, false, false]);
    expect(typeof perCall!.needsApproval).toBe("function");
    const ask = perCall!.needsApproval as (input: unknown, context: ToolApprovalContext) => boolean | PromiseLike<boolean>;
    const approvalContext = { toolCallId: "call-9", agentId: "agent", conversationId: "conv", idempotencyKey: "tr1_key" };
    expect(await ask({ rows: 50 }, approvalContext)).toBe(true);
    expect(await ask({ rows: 2 }, approvalContext)).toBe(false);
    expect(seen).toEqual([
      { input: { rows: 50 }, options: { toolCallId: "call-9", messages: [] } },
      { input: { rows: 2 }, options: { toolCallId: "call-9", messages: [] } },
    ]);
  });

  it("a needsApproval function's answer is read as the AI SDK reads it: truthy asks, sync or async", async () => {
    const answers: unknown[] = ["yes", 1, {}, "", 0, undefined, null];
    const [untyped] = fromAiSdkTools({
      untyped: { description: "d", inputSchema: z.object({}), needsApproval: (() => answers.shift()) as never, execute: () => "x" },
    });
    const [asynchronous] = fromAiSdkTools({
      asynchronous: { description: "d", inputSchema: z.object({}), needsApproval: (async () => "yes") as never, execute: () => "x" },
    });
    const approvalContext = { toolCallId: "call-9", agentId: "agent", conversationId: "conv", idempotencyKey: "tr1_key" };
    const ask = untyped!.needsApproval as (input: unknown, context: ToolApprovalContext) => boolean;
    expect(Array.from({ length: 7 }, () => ask({}, approvalContext))).toEqual([true, true, true, false, false, false, false]);
    const askLater = asynchronous!.needsApproval as (input: unknown, context: ToolApprovalContext) => PromiseLike<boolean>;
    expect(await askLater({}, approvalContext)).toBe(true);
  });

  it("refuses a needsApproval that is neither a boolean nor a function, naming the tool", () => {
    for (const [value, shown] of [
      ["yes", '"yes"'],
      [1, "number"],
      [null, "null"],
      [{ always: true }, "object"],
    ] as const) {
      expect(() =>
        fromAiSdkTools({
          drop_database: { description: "d", inputSchema: z.object({}), needsApproval: value as never, execute: () => "" },
        }),
      ).toThrow(
        expect.objectContaining({
          code: "INVALID_TOOL_DEFINITION",
          message: `AI SDK tool "drop_database": needsApproval must be a boolean or a function (input, { toolCallId, messages }), got ${shown}`,
        }),
      );
    }
  });

  it("outputSchema is checked (zod, jsonSchema() with validate): a mismatch is a tool error, a match is the app's output", async () => {
    const [typed, described, unchecked] = fromAiSdkTools({
      typed: tool({
        description: "d",
        inputSchema: z.object({ bad: z.boolean() }),
        outputSchema: z.object({ rows: z.number(), unit: z.string().default("rows") }),
        execute: ({ bad }) => (bad ? ({ rows: "three" } as unknown as { rows: number; unit: string }) : { rows: 3, unit: "rows" }),
        toModelOutput: ({ output }) => ({ type: "text", value: `${output.rows} ${output.unit}` }),
      }),
      described: tool({
        description: "d",
        inputSchema: z.object({}),
        outputSchema: jsonSchema<{ n: number }>(
          { type: "object", properties: { n: { type: "number" } } },
          {
            validate: (value) =>
              typeof (value as { n?: unknown }).n === "number"
                ? { success: true, value: value as { n: number } }
                : { success: false, error: new Error("n must be a number") },
          },
        ),
        execute: () => ({ n: "one" }) as unknown as { n: number },
      }),
      unchecked: tool({
        description: "d",
        inputSchema: z.object({}),
        outputSchema: jsonSchema<{ n: number }>({ type: "object", properties: { n: { type: "number" } } }),
        execute: () => ({ n: "one" }) as unknown as { n: number },
      }),
    });
    expect(typed!.outputSchema).toBeDefined();
    expect(await executeTool(typed!, { bad: false }, context())).toEqual({
      kind: "ok",
      content: [{ type: "text", text: "3 rows" }],
      output: { rows: 3, unit: "rows" },
    });
    expect(await executeTool(typed!, { bad: true }, context())).toMatchObject({
      kind: "tool-error",
      message: expect.stringMatching(/^the result does not match the tool's outputSchema:\n- rows: /),
    });
    expect(await executeTool(described!, {}, context())).toEqual({
      kind: "tool-error",
      message: "the result does not match the tool's outputSchema:\n- (root): n must be a number",
      content: [
        {
          type: "text",
          text: "Error: tool described failed: the result does not match the tool's outputSchema:\n- (root): n must be a number",
        },
      ],
    });
    // As in the AI SDK, jsonSchema() without validate describes and checks nothing.
    expect(unchecked!.outputSchema).toBeUndefined();
    expect(await executeTool(unchecked!, {}, context())).toMatchObject({ kind: "ok", output: { n: "one" } });
  });

  it("toModelOutput: json goes to the model as JSON, a throwing one is a tool error, the app keeps the real value", async () => {
    const [json, broken] = fromAiSdkTools({
      json: tool({
        description: "d",
        inputSchema: z.object({}),
        execute: async () => ({ id: 7, secret: "kept for the app" }),
        toModelOutput: ({ output }) => ({ type: "json", value: { id: output.id } }),
      }),
      broken: tool({
        description: "d",
        inputSchema: z.object({}),
        execute: () => "x",
        toModelOutput: () => {
          throw new Error("no mapping");
        },
      }),
    });
    expect(await executeTool(json!, {}, context())).toEqual({
      kind: "ok",
      content: [{ type: "text", text: JSON.stringify({ id: 7 }, null, 2) }],
      output: { id: 7, secret: "kept for the app" },
    });
    expect(await executeTool(broken!, {}, context())).toEqual({
      kind: "tool-error",
      message: "toModelOutput failed: no mapping",
      content: [{ type: "text", text: "Error: tool broken failed: toModelOutput failed: no mapping" }],
    });
  });

  it("refuses an outputSchema that is no schema and a toModelOutput that is no function, naming the tool", () => {
    expect(() => fromAiSdkTools({ odd: { description: "d", inputSchema: z.object({}), outputSchema: 42, execute: () => "" } })).toThrow(
      expect.objectContaining({
        code: "INVALID_TOOL_DEFINITION",
        message: `AI SDK tool "odd": outputSchema must be a zod schema, a Standard Schema or the AI SDK's jsonSchema(...)`,
      }),
    );
    expect(() =>
      fromAiSdkTools({ odd: { description: "d", inputSchema: z.object({}), toModelOutput: "text" as never, execute: () => "" } }),
    ).toThrow(
      expect.objectContaining({
        code: "INVALID_TOOL_DEFINITION",
        message: `AI SDK tool "odd": toModelOutput must be a function ({ toolCallId, input, output }), got string`,
      }),
    );
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
