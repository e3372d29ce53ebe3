import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toolJsonSchema } from "../../packages/toolrelay/src/tools/index.js";

describe("toolJsonSchema", () => {
  const schema = z.object({
    city: z.string().min(1).max(80).describe("City name, e.g. Paris"),
    units: z.enum(["celsius", "fahrenheit"]).default("celsius").describe("Temperature unit"),
    days: z.number().int().min(1).max(14).optional(),
    location: z
      .object({
        lat: z.number().gte(-90).lte(90),
        lon: z.number().gte(-180).lte(180),
      })
      .describe("Coordinates instead of a city"),
    tags: z.array(z.string().max(20)).max(5),
    note: z.string().meta({ description: "A note", examples: ["bring an umbrella"] }),
  });
  const json = toolJsonSchema(schema);

  it("is a plain object schema without $schema", () => {
    expect(json.type).toBe("object");
    expect(json).not.toHaveProperty("$schema");
    expect(Object.getPrototypeOf(json)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
  });

  it("keeps descriptions, bounds, enums and defaults", () => {
    expect(json.properties).toEqual({
      city: { type: "string", minLength: 1, maxLength: 80, description: "City name, e.g. Paris" },
      units: { type: "string", enum: ["celsius", "fahrenheit"], default: "celsius", description: "Temperature unit" },
      days: { type: "integer", minimum: 1, maximum: 14 },
      location: {
        type: "object",
        description: "Coordinates instead of a city",
        properties: {
          lat: { type: "number", minimum: -90, maximum: 90 },
          lon: { type: "number", minimum: -180, maximum: 180 },
        },
        required: ["lat", "lon"],
      },
      tags: { type: "array", maxItems: 5, items: { type: "string", maxLength: 20 } },
      note: { type: "string", description: "A note", examples: ["bring an umbrella"] },
    });
  });

  it("lists required names for the input side: optional and defaulted fields are not required", () => {
    expect(json.required).toEqual(["city", "location", "tags", "note"]);
  });

  it("describes what a transform accepts, not what it produces", () => {
    const transformed = toolJsonSchema(z.object({ count: z.string().transform((text) => Number(text)) }));
    expect(transformed.properties).toEqual({ count: { type: "string" } });
  });

  it("keeps a strict object's additionalProperties: false", () => {
    expect(toolJsonSchema(z.strictObject({ a: z.string() })).additionalProperties).toBe(false);
  });

  it("is deeply frozen", () => {
    expect(Object.isFrozen(json)).toBe(true);
    expect(Object.isFrozen(json.properties)).toBe(true);
    expect(Object.isFrozen((json.properties as Record<string, object>).city)).toBe(true);
  });

  it("rejects non-object and unrepresentable schemas with INVALID_TOOL_DEFINITION", () => {
    expect(() => toolJsonSchema(z.string())).toThrow(expect.objectContaining({ code: "INVALID_TOOL_DEFINITION" }));
    expect(() => toolJsonSchema(z.object({ id: z.bigint() }))).toThrow(expect.objectContaining({ code: "INVALID_TOOL_DEFINITION" }));
  });
});
