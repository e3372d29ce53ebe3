/**
 * A plain JSON Schema as a tool's inputSchema: advertised as given (without $schema), validated
 * by ajv compiled once — or, with validate: false, not at all.
 */
import { describe, expect, it } from "vitest";
import { defineTool, type JsonSchemaObject } from "../../packages/toolrelay/src/tools/index.js";
import { orderJsonSchema } from "../fixtures/tool-schemas.js";

const orderSchema = { $schema: "https://json-schema.org/draft/2020-12/schema", ...orderJsonSchema } as const satisfies JsonSchemaObject;

const good = { customer: { name: "Ada", tier: "pro" }, items: [{ sku: "ABC-123", quantity: 2 }] };

function orderTool(validate?: boolean) {
  return defineTool({
    name: "place_order",
    description: "Places an order",
    inputSchema: orderSchema,
    ...(validate === undefined ? {} : { validate }),
    execute: (input) => JSON.stringify(input),
  });
}

describe("a JSON Schema inputSchema", () => {
  it("is advertised as given, without $schema, deeply frozen", () => {
    const tool = orderTool();
    const { $schema: _dropped, ...expected } = orderSchema;
    expect(tool.inputKind).toBe("json-schema");
    expect(tool.jsonSchema).toEqual(expected);
    expect(Object.isFrozen((tool.jsonSchema.properties as Record<string, object>).customer)).toBe(true);
  });

  it("passes a valid input through unchanged (no defaults filled, nothing removed)", () => {
    const input = { ...good, extra: "kept" };
    const validation = orderTool().validateInput(input);
    expect(validation).toEqual({ ok: true, value: input });
    expect((validation as { value: unknown }).value).toBe(input);
  });

  it("refuses bad input with every failing path, in words the model can act on", () => {
    const validation = orderTool().validateInput({
      customer: { tier: "gold", nickname: "x" },
      items: [{ sku: "abc", quantity: 0 }, { quantity: 2.5 }],
      "gift note": "a".repeat(21),
    });
    expect(validation.ok).toBe(false);
    const issues = (validation as { issues: Array<{ path: string; message: string }> }).issues;
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: "customer.name", message: "is required" },
        { path: "customer.nickname", message: "is not allowed (the schema has additionalProperties: false)" },
        { path: "customer.tier", message: 'must be one of "free", "pro", "enterprise"' },
        { path: "items[0].sku", message: 'must match pattern "^[A-Z]{3}-\\d{3}$"' },
        { path: "items[0].quantity", message: "must be >= 1" },
        { path: "items[1].sku", message: "is required" },
        { path: "items[1].quantity", message: "must be integer" },
        { path: '["gift note"]', message: "must NOT have more than 20 characters" },
      ]),
    );
    expect(issues).toHaveLength(8);
  });

  it("refuses a wrong root with (root)", () => {
    expect(orderTool().validateInput("not an object")).toEqual({ ok: false, issues: [{ path: "(root)", message: "must be object" }] });
  });

  it("with validate: false advertises the same schema and passes anything through as sent", () => {
    const tool = orderTool(false);
    expect(tool.jsonSchema).toEqual(orderTool().jsonSchema);
    const bad = { customer: 7, __proto__: { polluted: true } };
    expect(tool.validateInput(bad)).toEqual({ ok: true, value: bad });
    expect((tool.validateInput(bad) as { value: unknown }).value).toBe(bad);
  });

  it("picks the dialect from $schema: draft-07 and 2019-09 keywords are honoured", () => {
    const draft07 = defineTool({
      name: "d7",
      description: "d",
      inputSchema: {
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: { tags: { type: "array", items: [{ type: "string" }], additionalItems: false } },
      },
      execute: () => "",
    });
    expect(draft07.validateInput({ tags: ["a"] }).ok).toBe(true);
    expect(draft07.validateInput({ tags: ["a", "b"] })).toMatchObject({ ok: false, issues: [{ path: "tags" }] });
    const draft2019 = defineTool({
      name: "d2019",
      description: "d",
      inputSchema: {
        $schema: "https://json-schema.org/draft/2019-09/schema",
        type: "object",
        properties: { a: { type: "string" } },
        unevaluatedProperties: false,
      },
      execute: () => "",
    });
    expect(draft2019.validateInput({ a: "x", b: 1 })).toEqual({
      ok: false,
      issues: [{ path: "b", message: "is not allowed (the schema has unevaluatedProperties: false)" }],
    });
  });

  it("resolves local $refs and $defs", () => {
    const tool = defineTool({
      name: "refs",
      description: "d",
      inputSchema: {
        type: "object",
        $defs: { point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] } },
        properties: { from: { $ref: "#/$defs/point" } },
      },
      execute: () => "",
    });
    expect(tool.validateInput({ from: { x: 1 } }).ok).toBe(true);
    expect(tool.validateInput({ from: {} })).toEqual({ ok: false, issues: [{ path: "from.x", message: "is required" }] });
  });

  it("two tools may share an $id (it is not registered globally)", () => {
    const make = (name: string, type: string) =>
      defineTool({
        name,
        description: "d",
        inputSchema: { $id: "https://example.com/same", type: "object", properties: { a: { type } } },
        execute: () => "",
      });
    const first = make("first", "string");
    const second = make("second", "number");
    expect(first.validateInput({ a: "x" }).ok).toBe(true);
    expect(second.validateInput({ a: 1 }).ok).toBe(true);
    expect(second.validateInput({ a: "x" }).ok).toBe(false);
  });

  it("treats format as an annotation (draft 2020-12's default), and allows unknown keywords", () => {
    const tool = defineTool({
      name: "fmt",
      description: "d",
      inputSchema: { type: "object", properties: { email: { type: "string", format: "email", "x-order": 1 } } },
      execute: () => "",
    });
    expect(tool.validateInput({ email: "not an email" }).ok).toBe(true);
  });

  it.each([
    [{ type: "string" }, "must be an object schema"],
    [{ properties: {} }, "must be an object schema"],
    [{ $schema: "http://json-schema.org/draft-04/schema#", type: "object" }, "is not supported"],
    [{ type: "object", properties: { a: { $ref: "#/$defs/missing" } } }, "does not compile"],
    [{ type: "object", properties: { a: { type: "strnig" } } }, "does not compile"],
    [{ type: "object", properties: { a: { minLength: "one" } } }, "does not compile"],
  ])("refuses the schema %j at definition time", (inputSchema, message) => {
    expect(() => defineTool({ name: "t", description: "d", inputSchema: inputSchema as never, execute: () => "" })).toThrow(
      expect.objectContaining({ code: "INVALID_TOOL_DEFINITION", message: expect.stringContaining(message) }),
    );
  });

  it("refuses a schema that is not JSON (a function inside, a cycle)", () => {
    const cyclic: Record<string, unknown> = { type: "object" };
    cyclic.self = cyclic;
    for (const inputSchema of [cyclic]) {
      expect(() => defineTool({ name: "t", description: "d", inputSchema: inputSchema as never, execute: () => "" })).toThrow(
        expect.objectContaining({ code: "INVALID_TOOL_DEFINITION", message: expect.stringContaining("not JSON") }),
      );
    }
  });

  it("refuses validate that is not a boolean and jsonSchema beside a JSON Schema", () => {
    expect(() =>
      defineTool({ name: "t", description: "d", inputSchema: { type: "object" }, validate: "no" as never, execute: () => "" }),
    ).toThrow(expect.objectContaining({ code: "INVALID_TOOL_DEFINITION", message: expect.stringContaining("validate must be a boolean") }));
    expect(() =>
      defineTool({ name: "t", description: "d", inputSchema: { type: "object" }, jsonSchema: { type: "object" }, execute: () => "" }),
    ).toThrow(
      expect.objectContaining({
        code: "INVALID_TOOL_DEFINITION",
        message: expect.stringContaining("jsonSchema is only for a Standard Schema"),
      }),
    );
  });
});
