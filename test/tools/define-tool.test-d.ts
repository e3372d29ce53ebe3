import { describe, expectTypeOf, test } from "vitest";
import { z } from "zod";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { defineTool, errorResult, ToolRegistry, type ClientTool, type ToolCallContext } from "../../packages/toolrelay/src/tools/index.js";

describe("defineTool types", () => {
  test("execute's input is inferred from the schema's output", () => {
    defineTool({
      name: "t",
      description: "d",
      inputSchema: z.object({ city: z.string(), days: z.number().optional(), units: z.enum(["c", "f"]).default("c") }),
      execute(input, context) {
        expectTypeOf(input).toEqualTypeOf<{ city: string; days?: number | undefined; units: "c" | "f" }>();
        expectTypeOf(context).toEqualTypeOf<ToolCallContext>();
        expectTypeOf(context.signal).toEqualTypeOf<AbortSignal>();
        return input.city;
      },
    });
  });

  test("a transform's output is what execute receives", () => {
    defineTool({
      name: "t",
      description: "d",
      inputSchema: z.object({ n: z.string() }).transform(({ n }) => Number(n)),
      execute(input) {
        expectTypeOf(input).toEqualTypeOf<number>();
        return input;
      },
    });
  });

  test("the returned tool keeps the schema type and is usable where a ClientTool is expected", () => {
    const schema = z.object({ a: z.string() });
    const tool = defineTool({ name: "t", description: "d", inputSchema: schema, execute: ({ a }) => a });
    expectTypeOf(tool).toEqualTypeOf<ClientTool<typeof schema, unknown, "t">>();
    expectTypeOf(tool.inputSchema).toEqualTypeOf<typeof schema>();
    expectTypeOf(tool).toExtend<ClientTool>();
    new ToolRegistry([tool, defineTool({ name: "u", description: "d", inputSchema: z.object({}), execute: () => undefined })]);
  });

  test("allowed return values: strings, JSON values, content blocks, results, nothing, promises of them", () => {
    const inputSchema = z.object({});
    defineTool({ name: "a", description: "d", inputSchema, execute: () => "text" });
    defineTool({ name: "b", description: "d", inputSchema, execute: async () => ({ rows: [1, 2], ok: true, at: new Date() }) });
    defineTool({ name: "c", description: "d", inputSchema, execute: () => [{ type: "text" as const, text: "x" }] });
    defineTool({ name: "d", description: "d", inputSchema, execute: async () => errorResult("no") });
    defineTool({ name: "e", description: "d", inputSchema, execute: () => {} });
    defineTool({ name: "f", description: "d", inputSchema, execute: () => null });
    interface Person {
      name: string;
    }
    const person: Person = { name: "x" };
    defineTool({ name: "g", description: "d", inputSchema, execute: async () => person });
  });

  test("wrong return types are rejected", () => {
    const inputSchema = z.object({});
    // @ts-expect-error a BigInt has no JSON form
    defineTool({ name: "a", description: "d", inputSchema, execute: () => 1n });
    // @ts-expect-error a Promise of a BigInt neither
    defineTool({ name: "b", description: "d", inputSchema, execute: async () => 1n });
    // @ts-expect-error a function is not a result
    defineTool({ name: "c", description: "d", inputSchema, execute: () => () => "x" });
    // @ts-expect-error a symbol is not a result
    defineTool({ name: "d", description: "d", inputSchema, execute: () => Symbol("x") });
  });

  test("wrong input usage is rejected", () => {
    defineTool({
      name: "t",
      description: "d",
      inputSchema: z.object({ city: z.string() }),
      // @ts-expect-error city is a string, not a number
      execute: ({ city }: { city: number }) => String(city),
    });
    defineTool({
      name: "t",
      description: "d",
      inputSchema: z.object({ city: z.string() }),
      execute(input) {
        // @ts-expect-error no such field
        return input.country;
      },
    });
  });

  test("required fields and option types are enforced", () => {
    // @ts-expect-error description is required
    defineTool({ name: "t", inputSchema: z.object({}), execute: () => "" });
    // @ts-expect-error a JSON Schema's root must be type "object"
    defineTool({ name: "t", description: "d", inputSchema: { type: "string" }, execute: () => "" });
    // @ts-expect-error inputSchema must be a schema
    defineTool({ name: "t", description: "d", inputSchema: "object", execute: () => "" });
    // @ts-expect-error annotations are booleans
    defineTool({ name: "t", description: "d", inputSchema: z.object({}), annotations: { readOnlyHint: "yes" }, execute: () => "" });
    // @ts-expect-error unknown option
    defineTool({ name: "t", description: "d", inputSchema: z.object({}), timeout: 5, execute: () => "" });
    // @ts-expect-error the old name is gone
    defineTool({ name: "t", description: "d", input: z.object({}), execute: () => "" });
  });

  test("a JSON Schema input is a JSON object; a Standard Schema input is its output type", () => {
    defineTool({
      name: "j",
      description: "d",
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      execute(input) {
        expectTypeOf(input).toEqualTypeOf<Record<string, unknown>>();
        return String(input.city);
      },
    });
    const standard: StandardSchemaV1<{ n: string }, { n: number }> = {
      "~standard": { version: 1, vendor: "test", validate: (value) => ({ value: { n: Number((value as { n: string }).n) } }) },
    };
    defineTool({
      name: "s",
      description: "d",
      inputSchema: standard,
      jsonSchema: { type: "object", properties: { n: { type: "string" } } },
      execute(input) {
        expectTypeOf(input).toEqualTypeOf<{ n: number }>();
        return input.n;
      },
    });
  });
});
