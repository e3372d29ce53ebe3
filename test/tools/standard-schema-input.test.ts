/**
 * A Standard Schema v1 validator (valibot, and hand-written ones) as a tool's inputSchema: its own
 * validate decides; the advertised JSON Schema comes from its Standard JSON Schema converter or
 * from an explicit jsonSchema — never guessed.
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { toJsonSchema, toStandardJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { defineTool } from "../../packages/toolrelay/src/tools/index.js";
import { shipmentValibot } from "../fixtures/tool-schemas.js";

const shipment = shipmentValibot;

describe("a Standard Schema inputSchema", () => {
  it("valibot through toStandardJsonSchema: advertised from its converter (2020-12), validated by valibot, defaults applied", () => {
    const tool = defineTool({
      name: "ship",
      description: "Ships a parcel",
      inputSchema: toStandardJsonSchema(shipment),
      execute: ({ destination, speed }) => `${destination.city} by ${speed}`,
    });
    expect(tool.inputKind).toBe("standard-schema");
    expect(tool.jsonSchema).toEqual({
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
    expect(tool.validateInput({ destination: { city: "Oslo", country: "NO" }, weightKg: 2 })).toEqual({
      ok: true,
      value: { destination: { city: "Oslo", country: "NO" }, weightKg: 2, speed: "economy" },
    });
    const refused = tool.validateInput({ destination: { city: "", country: "FI" }, weightKg: 31 });
    expect(refused).toEqual({
      ok: false,
      issues: [
        { path: "destination.city", message: "Invalid length: Expected >=1 but received 0" },
        { path: "destination.country", message: 'Invalid type: Expected ("NO" | "SE" | "DK") but received "FI"' },
        { path: "weightKg", message: "Invalid value: Expected <=30 but received 31" },
      ],
    });
  });

  it("a plain valibot schema with an explicit jsonSchema beside it", () => {
    const tool = defineTool({
      name: "ship",
      description: "d",
      inputSchema: shipment,
      jsonSchema: toJsonSchema(shipment),
      execute: () => "",
    });
    expect(tool.jsonSchema).toMatchObject({ type: "object", required: ["destination", "weightKg"] });
    expect(tool.jsonSchema).not.toHaveProperty("$schema");
    expect(tool.validateInput({ weightKg: 1 })).toMatchObject({ ok: false, issues: [{ path: "destination" }] });
  });

  it("a plain valibot schema without a JSON Schema is refused, saying what to pass", () => {
    expect(() => defineTool({ name: "ship", description: "d", inputSchema: shipment, execute: () => "" })).toThrow(
      expect.objectContaining({
        code: "INVALID_TOOL_DEFINITION",
        message: expect.stringContaining("the valibot schema has no JSON Schema converter"),
      }),
    );
  });

  it("an async Standard Schema validates through a promise; a throwing one is an issue, never a throw", async () => {
    const asyncSchema: StandardSchemaV1<{ n: number }> = {
      "~standard": {
        version: 1,
        vendor: "test",
        validate: async (value) =>
          typeof (value as { n?: unknown }).n === "number"
            ? { value: value as { n: number } }
            : { issues: [{ message: "n must be a number", path: [{ key: "n" }] }] },
      },
    };
    const tool = defineTool({
      name: "a",
      description: "d",
      inputSchema: asyncSchema,
      jsonSchema: { type: "object", properties: { n: { type: "number" } } },
      execute: () => "",
    });
    const pending = tool.validateInput({ n: "x" });
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).resolves.toEqual({ ok: false, issues: [{ path: "n", message: "n must be a number" }] });
    const throwing: StandardSchemaV1 = {
      "~standard": {
        version: 1,
        vendor: "test",
        validate: () => {
          throw new Error("boom");
        },
      },
    };
    const broken = defineTool({ name: "b", description: "d", inputSchema: throwing, jsonSchema: { type: "object" }, execute: () => "" });
    expect(broken.validateInput({})).toEqual({
      ok: false,
      issues: [{ path: "(root)", message: "the tool's input schema failed to run: boom" }],
    });
    const rejecting: StandardSchemaV1 = {
      "~standard": { version: 1, vendor: "test", validate: () => Promise.reject(new Error("later boom")) },
    };
    const late = defineTool({ name: "c", description: "d", inputSchema: rejecting, jsonSchema: { type: "object" }, execute: () => "" });
    await expect(late.validateInput({})).resolves.toEqual({
      ok: false,
      issues: [{ path: "(root)", message: "the tool's input schema failed to run: later boom" }],
    });
  });

  it("refuses a __proto__ key before the validator copies it onto a prototype", () => {
    const tool = defineTool({ name: "ship", description: "d", inputSchema: toStandardJsonSchema(v.looseObject({})), execute: () => "" });
    expect(tool.validateInput(JSON.parse('{"a":{"__proto__":{"x":1}}}'))).toEqual({
      ok: false,
      issues: [{ path: "a.__proto__", message: 'the key "__proto__" is not allowed' }],
    });
  });

  it("refuses validate: false and a jsonSchema that is not an object schema", () => {
    expect(() =>
      defineTool({ name: "s", description: "d", inputSchema: toStandardJsonSchema(shipment), validate: false, execute: () => "" }),
    ).toThrow(
      expect.objectContaining({
        code: "INVALID_TOOL_DEFINITION",
        message: expect.stringContaining("validate applies to a JSON Schema inputSchema only"),
      }),
    );
    expect(() =>
      defineTool({ name: "s", description: "d", inputSchema: shipment, jsonSchema: { type: "string" }, execute: () => "" }),
    ).toThrow(expect.objectContaining({ code: "INVALID_TOOL_DEFINITION", message: expect.stringContaining("must be an object schema") }));
  });

  it("a converter that cannot describe the schema is refused with its reason", () => {
    const transformed = toStandardJsonSchema(v.object({ when: v.date() }));
    expect(() => defineTool({ name: "s", description: "d", inputSchema: transformed, execute: () => "" })).toThrow(
      expect.objectContaining({ code: "INVALID_TOOL_DEFINITION", message: expect.stringContaining("cannot be described as JSON Schema") }),
    );
  });
});
