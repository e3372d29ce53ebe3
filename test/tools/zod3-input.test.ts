/**
 * A zod 3 schema as a tool's inputSchema (issue 24: zod 3 projects). Two real zod 3s: the zod
 * 3.25 package (the devDependency `zod3`, an alias of zod@3.25.76) and the zod 3 that zod 4
 * ships as `zod/v3`. Each validates with zod 3 itself, and offers the model the JSON Schema that
 * zod 4 offers for the same schema written with zod 4; what it cannot offer is refused at
 * defineTool, naming the path and what to write instead.
 */
import { describe, expect, it } from "vitest";
import { z as zod4 } from "zod";
import { z as zod4ShippedV3 } from "zod/v3";
import { z as zod325 } from "zod3";
import { defineTool, toolJsonSchema } from "../../packages/toolrelay/src/tools/index.js";
import { isZod3Schema, zod3JsonSchema } from "../../packages/toolrelay/src/tools/zod3-json-schema.js";

// Both are zod 3.25's classic API (zod 4 ships a copy of it); typed as one so that a test can call either.
const zod3s: ReadonlyArray<readonly [string, typeof zod325]> = [
  ['zod 3.25 (import from "zod")', zod325],
  ['zod 4\'s "zod/v3"', zod4ShippedV3 as unknown as typeof zod325],
];

const execute = (input: unknown) => JSON.stringify(input);

describe.each(zod3s)("a %s schema", (_, z3) => {
  it("is a zod 3 schema, not a zod 4 one, and its tool is of kind zod", () => {
    const schema = z3.object({ city: z3.string() });
    expect(isZod3Schema(schema)).toBe(true);
    expect(isZod3Schema(zod4.object({ city: zod4.string() }))).toBe(false);
    expect(defineTool({ name: "t", description: "d", inputSchema: schema, execute }).inputKind).toBe("zod");
  });

  it("offers the model what zod 4 offers for the same schema", () => {
    const write = (z: typeof zod4 | typeof z3) =>
      // The same schema in either API (the calls below mean the same in zod 3 and zod 4).
      (z as typeof zod4).object({
        city: (z as typeof zod4).string().min(1).max(60).describe("City name"),
        units: (z as typeof zod4).enum(["celsius", "fahrenheit"]).default("celsius").describe("Unit"),
        days: (z as typeof zod4).number().int().positive().max(14).optional(),
        tags: (z as typeof zod4)
          .array((z as typeof zod4).string().regex(/^[a-z]+$/))
          .min(1)
          .max(5),
        at: (z as typeof zod4).tuple([(z as typeof zod4).number(), (z as typeof zod4).number()]),
        note: (z as typeof zod4).string().nullable(),
        mode: (z as typeof zod4).union([(z as typeof zod4).literal("fast"), (z as typeof zod4).literal(3)]),
        limits: (z as typeof zod4).record((z as typeof zod4).string(), (z as typeof zod4).number().min(0)),
        both: (z as typeof zod4).intersection(
          (z as typeof zod4).object({ a: (z as typeof zod4).string() }),
          (z as typeof zod4).object({ b: (z as typeof zod4).boolean() }),
        ),
        parsed: (z as typeof zod4).string().transform((text) => text.length),
        strict: (z as typeof zod4).object({ only: (z as typeof zod4).null() }).strict(),
        anything: (z as typeof zod4).unknown(),
      });
    const fromZod3 = defineTool({ name: "t", description: "d", inputSchema: write(z3) as never, execute }).jsonSchema;
    expect(fromZod3).toEqual(toolJsonSchema(write(zod4) as never));
    expect(fromZod3).toMatchObject({ required: ["city", "tags", "at", "note", "mode", "limits", "both", "parsed", "strict", "anything"] });
  });

  it("validates with zod 3: defaults and transforms applied, every issue with its path, unions by their closest variant", () => {
    const tool = defineTool({
      name: "t",
      description: "d",
      inputSchema: z3.object({
        city: z3.string().min(1),
        units: z3.enum(["c", "f"]).default("c"),
        size: z3.string().transform((text) => text.length),
        items: z3.array(z3.object({ sku: z3.string(), quantity: z3.number().int().min(1) })),
        target: z3.union([
          z3.object({ kind: z3.literal("file"), path: z3.string() }),
          z3.object({ kind: z3.literal("url"), href: z3.string().url() }),
        ]),
      }),
      execute,
    });
    expect(tool.validateInput({ city: "Oslo", size: "abc", items: [], target: { kind: "file", path: "/a" } })).toEqual({
      ok: true,
      value: { city: "Oslo", units: "c", size: 3, items: [], target: { kind: "file", path: "/a" } },
    });
    expect(
      tool.validateInput({ city: "", units: "k", size: 1, items: [{ sku: "A", quantity: 0 }], target: { kind: "url", href: "nope" } }),
    ).toEqual({
      ok: false,
      issues: [
        { path: "city", message: "String must contain at least 1 character(s)" },
        { path: "units", message: "Invalid enum value. Expected 'c' | 'f', received 'k'" },
        { path: "size", message: "Expected string, received number" },
        { path: "items[0].quantity", message: "Number must be greater than or equal to 1" },
        { path: "target.href", message: "Invalid url" },
      ],
    });
    expect(tool.validateInput("not an object")).toEqual({
      ok: false,
      issues: [{ path: "(root)", message: "Expected object, received string" }],
    });
  });

  it("refuses a __proto__ key and reports an async refinement as an issue, never throwing", () => {
    const tool = defineTool({
      name: "t",
      description: "d",
      inputSchema: z3.object({ a: z3.string().refine(async () => true) }),
      execute,
    });
    expect(tool.validateInput(JSON.parse('{"a":"x","__proto__":{"admin":true}}'))).toEqual({
      ok: false,
      issues: [{ path: "__proto__", message: 'the key "__proto__" is not allowed' }],
    });
    const refused = tool.validateInput({ a: "x" });
    expect(refused).toMatchObject({ ok: false, issues: [{ path: "(root)" }] });
    expect(JSON.stringify(refused)).toMatch(/the tool's input schema failed to run: .*parseAsync/);
  });

  it.each([
    [
      "when",
      () => z3.object({ when: z3.date() }),
      "when: z.date() has no JSON form: take an ISO string and parse it, z.string().datetime().transform((text) => new Date(text))",
    ],
    ["id", () => z3.object({ id: z3.bigint() }), "id: z.bigint() has no JSON form"],
    ["tags[]", () => z3.object({ tags: z3.array(z3.set(z3.string())) }), "tags[]: z.set() has no JSON form: take an array"],
    ["meta[*]", () => z3.object({ meta: z3.record(z3.string(), z3.map(z3.string(), z3.number())) }), "meta[*]: z.map() has no JSON form"],
    ["pair[1]", () => z3.object({ pair: z3.tuple([z3.string(), z3.symbol()]) }), "pair[1]: z.symbol() is not a JSON value"],
    ["gone", () => z3.object({ gone: z3.undefined() }), "gone: z.undefined() is not a JSON value: make the field .optional() instead"],
  ])("refuses a type with no JSON form at %s, naming what to write instead", (_path, schema, expected) => {
    expect(() => defineTool({ name: "t", description: "d", inputSchema: schema(), execute })).toThrow(
      expect.objectContaining({
        code: "INVALID_TOOL_DEFINITION",
        message: expect.stringContaining(`tool "t": the zod 3 input schema cannot be described as JSON Schema at ${expected}`),
      }),
    );
  });

  it("refuses a recursive z.lazy() and says to write it with zod 4; a lazy that does not recurse is converted", () => {
    interface Node {
      name: string;
      children: Node[];
    }
    const node: zod325.ZodType<Node> = z3.object({ name: z3.string(), children: z3.lazy(() => z3.array(node)) }) as never;
    expect(() => defineTool({ name: "t", description: "d", inputSchema: z3.object({ tree: node }), execute })).toThrow(
      /the zod 3 input schema cannot be described as JSON Schema at tree\.children\[\]: a recursive z\.lazy\(\) schema: .*import \{ z \} from "zod\/v4"/,
    );
    const lazy = defineTool({ name: "t", description: "d", inputSchema: z3.object({ a: z3.lazy(() => z3.string()) }), execute });
    expect(lazy.jsonSchema).toEqual({ type: "object", properties: { a: { type: "string" } }, required: ["a"] });
  });

  it("refuses a zod 4 schema inside a zod 3 one, and a root that is not an object", () => {
    expect(() => defineTool({ name: "t", description: "d", inputSchema: z3.object({ a: zod4.string() as never }), execute })).toThrow(
      /at a: this is not a zod 3 schema \(a zod 4 schema inside a zod 3 one\?\): write the whole input schema with one zod/,
    );
    expect(() => defineTool({ name: "t", description: "d", inputSchema: z3.string(), execute })).toThrow(
      /input schema must be an object schema \(z\.object\(\{\.\.\.\}\)\); its JSON Schema has type "string"/,
    );
  });
});

describe("zod3JsonSchema", () => {
  it("writes a TypeScript enum's values without its reverse keys, and passthrough / catchall objects", () => {
    enum Level {
      Low = 1,
      High = 2,
    }
    expect(zod3JsonSchema(zod325.nativeEnum(Level) as never)).toEqual({ type: "number", enum: [1, 2] });
    expect(zod3JsonSchema(zod325.object({}).passthrough() as never)).toEqual({ type: "object", properties: {}, additionalProperties: {} });
    expect(zod3JsonSchema(zod325.object({}).catchall(zod325.number()) as never)).toEqual({
      type: "object",
      properties: {},
      additionalProperties: { type: "number" },
    });
  });
});
