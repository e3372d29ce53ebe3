import { describe, expectTypeOf, test } from "vitest";
import { z } from "zod";
import { defineTool, errorResult, ToolRegistry, type ClientTool, type ToolCallContext } from "../../src/tools/index.js";

describe("defineTool types", () => {
  test("execute's input is inferred from the schema's output", () => {
    defineTool({
      name: "t",
      description: "d",
      input: z.object({ city: z.string(), days: z.number().optional(), units: z.enum(["c", "f"]).default("c") }),
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
      input: z.object({ n: z.string() }).transform(({ n }) => Number(n)),
      execute(input) {
        expectTypeOf(input).toEqualTypeOf<number>();
        return input;
      },
    });
  });

  test("the returned tool keeps the schema type and is usable where a ClientTool is expected", () => {
    const schema = z.object({ a: z.string() });
    const tool = defineTool({ name: "t", description: "d", input: schema, execute: ({ a }) => a });
    expectTypeOf(tool).toEqualTypeOf<ClientTool<typeof schema>>();
    expectTypeOf(tool.input).toEqualTypeOf<typeof schema>();
    expectTypeOf(tool).toExtend<ClientTool>();
    new ToolRegistry([tool, defineTool({ name: "u", description: "d", input: z.object({}), execute: () => undefined })]);
  });

  test("allowed return values: strings, JSON values, content blocks, results, nothing, promises of them", () => {
    const input = z.object({});
    defineTool({ name: "a", description: "d", input, execute: () => "text" });
    defineTool({ name: "b", description: "d", input, execute: async () => ({ rows: [1, 2], ok: true, at: new Date() }) });
    defineTool({ name: "c", description: "d", input, execute: () => [{ type: "text" as const, text: "x" }] });
    defineTool({ name: "d", description: "d", input, execute: async () => errorResult("no") });
    defineTool({ name: "e", description: "d", input, execute: () => {} });
    defineTool({ name: "f", description: "d", input, execute: () => null });
    interface Person {
      name: string;
    }
    const person: Person = { name: "x" };
    defineTool({ name: "g", description: "d", input, execute: async () => person });
  });

  test("wrong return types are rejected", () => {
    const input = z.object({});
    // @ts-expect-error a BigInt has no JSON form
    defineTool({ name: "a", description: "d", input, execute: () => 1n });
    // @ts-expect-error a Promise of a BigInt neither
    defineTool({ name: "b", description: "d", input, execute: async () => 1n });
    // @ts-expect-error a function is not a result
    defineTool({ name: "c", description: "d", input, execute: () => () => "x" });
    // @ts-expect-error a symbol is not a result
    defineTool({ name: "d", description: "d", input, execute: () => Symbol("x") });
  });

  test("wrong input usage is rejected", () => {
    defineTool({
      name: "t",
      description: "d",
      input: z.object({ city: z.string() }),
      // @ts-expect-error city is a string, not a number
      execute: ({ city }: { city: number }) => String(city),
    });
    defineTool({
      name: "t",
      description: "d",
      input: z.object({ city: z.string() }),
      execute(input) {
        // @ts-expect-error no such field
        return input.country;
      },
    });
  });

  test("required fields and option types are enforced", () => {
    // @ts-expect-error description is required
    defineTool({ name: "t", input: z.object({}), execute: () => "" });
    // @ts-expect-error input must be a zod schema
    defineTool({ name: "t", description: "d", input: { type: "object" }, execute: () => "" });
    // @ts-expect-error hints are booleans
    defineTool({ name: "t", description: "d", input: z.object({}), hints: { readOnly: "yes" }, execute: () => "" });
    // @ts-expect-error unknown option
    defineTool({ name: "t", description: "d", input: z.object({}), timeout: 5, execute: () => "" });
  });
});
