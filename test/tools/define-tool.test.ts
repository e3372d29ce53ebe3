import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolrelayError } from "../../src/errors.js";
import { defineTool, isClientTool, type ToolDefinition } from "../../src/tools/index.js";

const base = {
  name: "get_weather",
  description: "Current weather for a city",
  input: z.object({ city: z.string() }),
  execute: ({ city }: { city: string }) => `sunny in ${city}`,
};

/** defineTool with a definition TypeScript would refuse (what a JavaScript caller can pass). */
function defineLoose(definition: Record<string, unknown>): unknown {
  return defineTool(definition as unknown as ToolDefinition<z.ZodType>);
}

function invalidDefinition(definition: Record<string, unknown>): ToolrelayError {
  try {
    defineLoose(definition);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolrelayError);
    expect(error).toMatchObject({ code: "INVALID_TOOL_DEFINITION" });
    return error as ToolrelayError;
  }
  throw new Error("defineTool accepted an invalid definition");
}

describe("defineTool", () => {
  it("returns a frozen tool with its schema, hints and advertised JSON Schema", () => {
    const tool = defineTool({ ...base, label: "Weather", hints: { readOnly: true }, timeoutMs: 10_000 });
    expect(tool).toMatchObject({ name: "get_weather", description: base.description, label: "Weather", timeoutMs: 10_000 });
    expect(tool.hints).toEqual({ readOnly: true });
    expect(tool.input).toBe(base.input);
    expect(tool.jsonSchema).toEqual({
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    });
    expect(Object.isFrozen(tool)).toBe(true);
    expect(Object.isFrozen(tool.hints)).toBe(true);
    expect(Object.isFrozen(tool.jsonSchema)).toBe(true);
    expect(isClientTool(tool)).toBe(true);
    expect(isClientTool({ ...tool })).toBe(false);
  });

  it("leaves label, hints and timeoutMs unset by default", () => {
    const tool = defineTool(base);
    expect(tool.label).toBeUndefined();
    expect(tool.timeoutMs).toBeUndefined();
    expect(tool.hints).toEqual({});
  });

  it.each(["", "has space", "dot.name", "naïve", "a".repeat(65), "slash/name"])("rejects the name %j", (name) => {
    expect(invalidDefinition({ ...base, name }).message).toContain("tool name");
  });

  it("accepts names at the edges of the pattern", () => {
    expect(defineTool({ ...base, name: "a".repeat(64) }).name).toHaveLength(64);
    expect(defineTool({ ...base, name: "A-z_0" }).name).toBe("A-z_0");
  });

  it("rejects a name that is not a string", () => {
    invalidDefinition({ ...base, name: 42 });
  });

  it.each([["", "empty"], ["   ", "blank"], [undefined, "missing"], [7, "a number"]])(
    "rejects a description that is %j (%s)",
    (description, _why) => {
      expect(invalidDefinition({ ...base, description }).message).toContain("description");
    },
  );

  it("rejects an empty label", () => {
    expect(invalidDefinition({ ...base, label: "" }).message).toContain("label");
  });

  it.each([
    ["a string schema", z.string()],
    ["an array schema", z.array(z.string())],
    ["a union of objects", z.object({ a: z.string() }).or(z.object({ b: z.string() }))],
    ["a number", z.number()],
  ])("rejects %s as input (its JSON Schema is not type object)", (_label, input) => {
    expect(invalidDefinition({ ...base, input }).message).toContain("must be an object schema");
  });

  it("accepts any schema whose JSON Schema is an object: a record, a transformed object", () => {
    expect(defineTool({ ...base, input: z.record(z.string(), z.number()), execute: () => "" }).jsonSchema.type).toBe("object");
    const transformed = z.object({ city: z.string() }).transform(({ city }) => city.toUpperCase());
    expect(defineTool({ ...base, input: transformed, execute: (city) => city }).jsonSchema).toMatchObject({ type: "object" });
  });

  it("rejects an input that is not a zod schema", () => {
    expect(invalidDefinition({ ...base, input: { type: "object", properties: {} } }).message).toContain("zod schema");
    invalidDefinition({ ...base, input: undefined });
  });

  it("rejects a schema zod cannot express as JSON Schema, with zod's reason as the cause", () => {
    const error = invalidDefinition({ ...base, input: z.object({ when: z.date() }) });
    expect(error.message).toContain("Date cannot be represented");
    expect(error.cause).toBeInstanceOf(Error);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2_147_483_648, "1000"])("rejects timeoutMs %j", (timeoutMs) => {
    expect(invalidDefinition({ ...base, timeoutMs }).message).toContain("timeoutMs");
  });

  it("accepts timeoutMs up to the largest timer delay", () => {
    expect(defineTool({ ...base, timeoutMs: 2_147_483_647 }).timeoutMs).toBe(2_147_483_647);
  });

  it("rejects bad hints", () => {
    expect(invalidDefinition({ ...base, hints: { readOnly: "yes" } }).message).toContain("hints.readOnly");
    expect(invalidDefinition({ ...base, hints: { readonly: true } }).message).toContain('unknown hint "readonly"');
    expect(invalidDefinition({ ...base, hints: { readOnly: true, destructive: true } }).message).toContain("cannot both");
    invalidDefinition({ ...base, hints: [] });
  });

  it("rejects a missing execute", () => {
    expect(invalidDefinition({ ...base, execute: undefined }).message).toContain("execute");
  });

  it("rejects unknown options so that typos do not pass silently", () => {
    const error = invalidDefinition({ ...base, timeout: 5000, parameters: {} });
    expect(error.message).toContain('"timeout", "parameters"');
  });

  it("names the tool in every message after the name is checked", () => {
    expect(invalidDefinition({ ...base, description: "" }).message).toContain('tool "get_weather"');
  });

  it("rejects a definition that is not an object", () => {
    expect(() => defineTool(null as unknown as ToolDefinition<z.ZodType>)).toThrow(ToolrelayError);
  });
});
