/**
 * A tool's `outputSchema` and `toModelOutput` (issue 26), through `executeTool`: the value the app
 * reads (`output`) is the schema's output (defaults, transforms), checked by zod 4, zod 3, a
 * Standard Schema (sync or async) or a JSON Schema; a value that fails is a `tool-error` naming
 * the failing paths, with no `output`; `toModelOutput` decides what the model gets and its failure
 * is the tool's; an error result or an `Error` passes unchecked; a bad definition is refused.
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import {
  defineTool,
  errorResult,
  executeTool as executeWithCallback,
  type ClientTool,
  type ExecutionOutcome,
  type ToolCallContext,
} from "../../packages/toolrelay/src/tools/index.js";

const context: ToolCallContext = {
  signal: new AbortController().signal,
  toolCallId: "call-1",
  agentId: "agent-1",
  conversationId: "conv-1",
  idempotencyKey: "tr1_test",
  progress: () => undefined,
};

/** executeTool as a promise. */
function run(tool: ClientTool): Promise<ExecutionOutcome> {
  return new Promise((resolve) => executeWithCallback(tool, {}, context, 32_000, (_token, outcome) => resolve(outcome), undefined));
}

/** A tool with `outputSchema` (typed loosely: these tests feed it values the schema refuses on purpose). */
function shaped(outputSchema: unknown, value: unknown, toModelOutput?: (output: never) => unknown): ClientTool {
  return defineTool({
    name: "report",
    description: "Reports",
    inputSchema: z.object({}),
    outputSchema: outputSchema as z.ZodType,
    ...(toModelOutput === undefined ? {} : { toModelOutput: toModelOutput as (output: unknown) => string }),
    execute: () => value as never,
  }) as unknown as ClientTool;
}

const textOf = (outcome: ExecutionOutcome) => outcome.content.map((block) => (block.type === "text" ? block.text : "")).join("");

/** A hand-written Standard Schema: a positive `count`, answered after a tick when `async`. */
function countSchema(options: { async?: boolean; throws?: boolean } = {}): StandardSchemaV1<unknown, { count: number }> {
  const check = (value: unknown): StandardSchemaV1.Result<{ count: number }> => {
    const count = (value as { count?: unknown } | null)?.count;
    if (typeof count === "number" && count > 0) return { value: { count } };
    return { issues: [{ message: "count must be a positive number", path: ["count"] }] };
  };
  return {
    "~standard": {
      version: 1,
      vendor: "test",
      validate: (value) => {
        if (options.throws === true) return Promise.reject(new Error("validator crashed"));
        return options.async === true ? new Promise((resolve) => setTimeout(() => resolve(check(value)), 5)) : check(value);
      },
    },
  };
}

describe("outputSchema", () => {
  it("zod: the app reads the schema's output (default filled, transform applied); the model gets that value as JSON", async () => {
    const schema = z.object({
      total: z.number().int(),
      currency: z.string().default("EUR"),
      at: z.string().transform((at) => at.slice(0, 10)),
    });
    const outcome = await run(shaped(schema, { total: 1050, at: "2026-12-01T10:00:00Z" }));
    expect(outcome).toEqual({
      kind: "ok",
      content: [{ type: "text", text: JSON.stringify({ total: 1050, currency: "EUR", at: "2026-12-01" }, null, 2) }],
      output: { total: 1050, currency: "EUR", at: "2026-12-01" },
    });
  });

  it("zod: a value that fails is a tool error naming every failing path, with no output", async () => {
    const schema = z.object({ total: z.number().int(), items: z.array(z.string()) });
    const outcome = await run(shaped(schema, { total: 10.5, items: ["a", 2] }));
    expect(outcome.kind).toBe("tool-error");
    expect(outcome).not.toHaveProperty("output");
    expect(textOf(outcome)).toBe(
      "Error: tool report failed: the result does not match the tool's outputSchema:\n" +
        "- total: Invalid input: expected int, received number\n" +
        "- items[1]: Invalid input: expected string, received number",
    );
  });

  it("zod 3: checked the same way", async () => {
    const schema = z3.object({ count: z3.number().min(1) });
    expect(await run(shaped(schema, { count: 2 }))).toMatchObject({ kind: "ok", output: { count: 2 } });
    const failed = await run(shaped(schema, { count: 0 }));
    expect(failed.kind).toBe("tool-error");
    expect(textOf(failed)).toMatch(/^Error: tool report failed: the result does not match the tool's outputSchema:\n- count: /);
  });

  it("a Standard Schema (valibot): its output, and its issues", async () => {
    const schema = v.object({ name: v.pipe(v.string(), v.minLength(2)), tags: v.optional(v.array(v.string()), []) });
    expect(await run(shaped(schema, { name: "ok" }))).toMatchObject({ kind: "ok", output: { name: "ok", tags: [] } });
    const failed = await run(shaped(schema, { name: "x" }));
    expect(failed.kind).toBe("tool-error");
    expect(textOf(failed)).toContain("- name: ");
  });

  it("a Standard Schema that validates asynchronously: the outcome waits for it, both ways", async () => {
    const schema = countSchema({ async: true });
    expect(await run(shaped(schema, { count: 3 }))).toMatchObject({ kind: "ok", output: { count: 3 } });
    const failed = await run(shaped(schema, { count: -1 }));
    expect(textOf(failed)).toBe(
      "Error: tool report failed: the result does not match the tool's outputSchema:\n- count: count must be a positive number",
    );
  });

  it("an output schema that fails to run (a rejecting Standard Schema, a throwing zod refinement): a tool error that says the OUTPUT schema failed", async () => {
    const failed = await run(shaped(countSchema({ throws: true }), { count: 3 }));
    expect(failed.kind).toBe("tool-error");
    expect(textOf(failed)).toBe(
      "Error: tool report failed: the result does not match the tool's outputSchema:\n- (root): the tool's output schema failed to run: validator crashed",
    );
    const refining = z.object({ count: z.number() }).refine(() => {
      throw new Error("refinement crashed");
    });
    expect(textOf(await run(shaped(refining, { count: 3 })))).toBe(
      "Error: tool report failed: the result does not match the tool's outputSchema:\n- (root): the tool's output schema failed to run: refinement crashed",
    );
  });

  it("a JSON Schema: any type at the root (not only objects), checked by ajv", async () => {
    const schema = { type: "array", items: { type: "integer" }, maxItems: 3 };
    expect(await run(shaped(schema, [1, 2]))).toMatchObject({ kind: "ok", output: [1, 2] });
    const failed = await run(shaped(schema, [1, "two"]));
    expect(failed.kind).toBe("tool-error");
    expect(textOf(failed)).toContain("the result does not match the tool's outputSchema:\n- ");
    expect(await run(shaped({ type: "string" }, "plain"))).toEqual({
      kind: "ok",
      content: [{ type: "text", text: "plain" }],
      output: "plain",
    });
  });

  it("an error the tool reports (errorResult, or a returned Error) passes unchecked: the tool's own failure, not a schema failure", async () => {
    const schema = z.object({ total: z.number() });
    const reported = await run(shaped(schema, errorResult("card declined")));
    expect(reported.kind).toBe("tool-error");
    expect(textOf(reported)).toBe("Error: tool report reported an error: card declined");
    const returned = await run(shaped(schema, new Error("card expired")));
    expect(returned.kind).toBe("tool-error");
    expect(textOf(returned)).not.toContain("outputSchema");
  });

  it("a thrown error is the tool's failure, as without a schema", async () => {
    const tool = defineTool({
      name: "report",
      description: "Reports",
      inputSchema: z.object({}),
      outputSchema: z.object({ total: z.number() }),
      execute: () => {
        throw new Error("database down");
      },
    }) as unknown as ClientTool;
    const outcome = await run(tool);
    expect(outcome.kind).toBe("tool-error");
    expect(textOf(outcome)).toBe("Error: tool report failed: database down");
  });
});

describe("toModelOutput", () => {
  const schema = z.object({ id: z.string(), cents: z.number().int() });

  it("maps the checked output to what the model gets; the app keeps the object", async () => {
    const outcome = await run(
      shaped(schema, { id: "A", cents: 150 }, (order: { id: string; cents: number }) => `order ${order.id}: ${order.cents} cents`),
    );
    expect(outcome).toEqual({ kind: "ok", content: [{ type: "text", text: "order A: 150 cents" }], output: { id: "A", cents: 150 } });
  });

  it("async, and content blocks", async () => {
    const outcome = await run(
      shaped(schema, { id: "B", cents: 5 }, async (order: { id: string }) => ({ content: [{ type: "text", text: `order ${order.id}` }] })),
    );
    expect(outcome).toEqual({ kind: "ok", content: [{ type: "text", text: "order B" }], output: { id: "B", cents: 5 } });
  });

  it("is not called for an output that fails the schema", async () => {
    let called = 0;
    const outcome = await run(shaped(schema, { id: "C", cents: 1.5 }, () => ++called));
    expect(outcome.kind).toBe("tool-error");
    expect(called).toBe(0);
  });

  it("throwing or rejecting: a tool error that names toModelOutput, no output", async () => {
    const thrown = await run(
      shaped(schema, { id: "D", cents: 1 }, () => {
        throw new Error("bad template");
      }),
    );
    expect(thrown.kind).toBe("tool-error");
    expect(thrown).not.toHaveProperty("output");
    expect(textOf(thrown)).toBe("Error: tool report failed: toModelOutput failed: bad template");
    const rejected = await run(shaped(schema, { id: "D", cents: 1 }, () => Promise.reject(new Error("renderer offline"))));
    expect(textOf(rejected)).toBe("Error: tool report failed: toModelOutput failed: renderer offline");
  });

  it("without outputSchema, maps the raw return value", async () => {
    const tool = defineTool({
      name: "report",
      description: "Reports",
      inputSchema: z.object({}),
      toModelOutput: (value) => `saw ${JSON.stringify(value)}`,
      execute: () => ({ raw: true }),
    }) as unknown as ClientTool;
    expect(await run(tool)).toEqual({ kind: "ok", content: [{ type: "text", text: 'saw {"raw":true}' }], output: { raw: true } });
  });
});

describe("a definition with a bad outputSchema, toModelOutput or needsApproval", () => {
  const base = { name: "report", description: "Reports", inputSchema: z.object({}), execute: () => "x" };
  it("is refused with INVALID_TOOL_DEFINITION and a message naming the field", () => {
    expect(() => defineTool({ ...base, outputSchema: 42 as never })).toThrow(/outputSchema: outputSchema must be a zod schema/);
    expect(() => defineTool({ ...base, outputSchema: { type: "no-such-type" } })).toThrow(
      /^tool "report": outputSchema: output JSON Schema does not compile: /,
    );
    expect(() => defineTool({ ...base, toModelOutput: "text" as never })).toThrow("toModelOutput must be a function of the output, got");
    expect(() => defineTool({ ...base, needsApproval: "yes" as never })).toThrow(
      "needsApproval must be a boolean or a function of the input, got",
    );
    try {
      defineTool({ ...base, outputSchema: 42 as never });
    } catch (error) {
      expect(error).toMatchObject({ code: "INVALID_TOOL_DEFINITION" });
    }
  });
});
