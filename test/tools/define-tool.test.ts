import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import { defineTool, isClientTool, type ToolDefinition } from "../../packages/toolrelay/src/tools/index.js";

const base = {
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: z.object({ city: z.string() }),
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
  it("returns a frozen tool with its schema, annotations and advertised JSON Schema", () => {
    const annotations = { title: "Weather", readOnlyHint: true, openWorldHint: true };
    const tool = defineTool({ ...base, annotations, timeoutMs: 10_000 });
    expect(tool).toMatchObject({ name: "get_weather", description: base.description, inputKind: "zod", timeoutMs: 10_000 });
    expect(tool.annotations).toEqual(annotations);
    expect(tool.annotations).not.toBe(annotations);
    expect(tool.inputSchema).toBe(base.inputSchema);
    expect(tool.jsonSchema).toEqual({
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    });
    expect(Object.isFrozen(tool)).toBe(true);
    expect(Object.isFrozen(tool.annotations)).toBe(true);
    expect(Object.isFrozen(tool.jsonSchema)).toBe(true);
    expect(isClientTool(tool)).toBe(true);
    expect(isClientTool({ ...tool })).toBe(false);
  });

  it("leaves annotations and timeoutMs unset by default", () => {
    const tool = defineTool(base);
    expect(tool.timeoutMs).toBeUndefined();
    expect(tool.annotations).toEqual({});
  });

  it("validates with the zod schema through validateInput, synchronously", () => {
    const tool = defineTool(base);
    expect(tool.validateInput({ city: "Paris", extra: 1 })).toEqual({ ok: true, value: { city: "Paris" } });
    expect(tool.validateInput({ city: 7 })).toEqual({
      ok: false,
      issues: [{ path: "city", message: "Invalid input: expected string, received number" }],
    });
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

  it.each([
    ["", "empty"],
    ["   ", "blank"],
    [undefined, "missing"],
    [7, "a number"],
  ])("rejects a description that is %j (%s)", (description, _why) => {
    expect(invalidDefinition({ ...base, description }).message).toContain("description");
  });

  it("rejects an empty annotations.title", () => {
    expect(invalidDefinition({ ...base, annotations: { title: "" } }).message).toContain("annotations.title");
  });

  it("points the old option names to the new ones (no aliases)", () => {
    const error = invalidDefinition({ ...base, input: base.inputSchema, hints: { readOnly: true }, label: "W" });
    expect(error.message).toContain('"input" is now "inputSchema"');
    expect(error.message).toContain('"hints" is now "annotations"');
    expect(error.message).toContain('"label" is now "annotations.title"');
  });

  it.each([
    ["a string schema", z.string()],
    ["an array schema", z.array(z.string())],
    ["a union of objects", z.object({ a: z.string() }).or(z.object({ b: z.string() }))],
    ["a number", z.number()],
  ])("rejects %s as input (its JSON Schema is not type object)", (_label, input) => {
    expect(invalidDefinition({ ...base, inputSchema: input }).message).toContain("must be an object schema");
  });

  it("accepts any schema whose JSON Schema is an object: a record, a transformed object", () => {
    expect(defineTool({ ...base, inputSchema: z.record(z.string(), z.number()), execute: () => "" }).jsonSchema.type).toBe("object");
    const transformed = z.object({ city: z.string() }).transform(({ city }) => city.toUpperCase());
    expect(defineTool({ ...base, inputSchema: transformed, execute: (city) => city }).jsonSchema).toMatchObject({ type: "object" });
  });

  it("rejects an inputSchema that is none of zod, Standard Schema or JSON Schema", () => {
    for (const inputSchema of [undefined, null, "object", 7, [], new Map()]) {
      expect(invalidDefinition({ ...base, inputSchema }).message).toContain("inputSchema must be a zod schema");
    }
  });

  it("refuses jsonSchema and validate beside a zod schema (zod generates and validates)", () => {
    expect(invalidDefinition({ ...base, jsonSchema: { type: "object" } }).message).toContain("jsonSchema is generated from a zod schema");
    expect(invalidDefinition({ ...base, validate: false }).message).toContain("validate applies to a JSON Schema inputSchema only");
  });

  it("rejects a schema zod cannot express as JSON Schema, with zod's reason as the cause", () => {
    const error = invalidDefinition({ ...base, inputSchema: z.object({ when: z.date() }) });
    expect(error.message).toContain("Date cannot be represented");
    expect(error.cause).toBeInstanceOf(Error);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 300_001, 2_147_483_647, "1000"])("rejects timeoutMs %j", (timeoutMs) => {
    expect(invalidDefinition({ ...base, timeoutMs }).message).toContain("timeoutMs must be a positive integer up to 300000");
  });

  it("says why a timeoutMs above the runtime's 300 s wait is refused", () => {
    expect(invalidDefinition({ ...base, timeoutMs: 600_000 }).message).toContain(
      "the runtime stops waiting for a client tool after 300 s, so a longer deadline could never be reached",
    );
  });

  it("accepts timeoutMs up to the runtime's own 300 s wait", () => {
    expect(defineTool({ ...base, timeoutMs: 300_000 }).timeoutMs).toBe(300_000);
    expect(defineTool({ ...base, timeoutMs: 1 }).timeoutMs).toBe(1);
  });

  it("rejects bad annotations", () => {
    expect(invalidDefinition({ ...base, annotations: { readOnlyHint: "yes" } }).message).toContain("annotations.readOnlyHint");
    expect(invalidDefinition({ ...base, annotations: { readOnly: true } }).message).toContain('unknown annotation "readOnly"');
    expect(invalidDefinition({ ...base, annotations: { readOnlyHint: true, destructiveHint: true } }).message).toContain("cannot both");
    expect(invalidDefinition({ ...base, annotations: { title: 7 } }).message).toContain("annotations.title");
    invalidDefinition({ ...base, annotations: [] });
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
