/**
 * arktype as a tool's inputSchema (a Standard Schema with a Standard JSON Schema converter). Its
 * converter describes a type it cannot convert as `{}` — "any value" to the model, for a field the
 * validator then refuses every time. defineTool refuses such a schema, naming every place (issue
 * 24); what arktype converts is offered as it converts it.
 */
import { type } from "arktype";
import { describe, expect, it } from "vitest";
import { defineTool } from "../../packages/toolrelay/src/tools/index.js";

const execute = (input: unknown) => JSON.stringify(input);

describe("an arktype inputSchema", () => {
  it("is offered as its converter writes it and validated by arktype", async () => {
    const tool = defineTool({
      name: "t",
      description: "d",
      inputSchema: type({ city: "string > 0", "days?": "1 <= number.integer <= 14", when: "string.date.iso.parse" }),
      execute: ({ city, when }) => `${city} ${when.toISOString()}`,
    });
    expect(tool.inputKind).toBe("standard-schema");
    expect(tool.jsonSchema).toMatchObject({
      type: "object",
      properties: { city: { type: "string", minLength: 1 }, days: { type: "integer", minimum: 1, maximum: 14 }, when: { type: "string" } },
      required: ["city", "when"],
    });
    const valid = await tool.validateInput({ city: "Oslo", when: "2026-01-02T03:04:05Z" });
    expect(valid).toEqual({ ok: true, value: { city: "Oslo", when: new Date("2026-01-02T03:04:05Z") } });
    expect(await tool.validateInput({ city: "", when: "2026-01-02" })).toMatchObject({ ok: false, issues: [{ path: "city" }] });
  });

  it("refuses a Date it would offer as {}, with the path and what to write instead", () => {
    expect(() => defineTool({ name: "t", description: "d", inputSchema: type({ when: "Date", name: "string" }), execute })).toThrow(
      expect.objectContaining({
        code: "INVALID_TOOL_DEFINITION",
        message:
          'tool "t": the arktype schema cannot be described as JSON Schema: it has types JSON Schema cannot express, which its converter ' +
          "would offer the model as {} (any value): when (a Date). Accept a JSON type there and convert it in the schema (for a date, " +
          "arktype's \"string.date.iso.parse\" reads an ISO string into a Date), or leave the field out of the tool's input",
      }),
    );
  });

  it("names every such place: nested, in arrays, in unions, bigint, Map, class instances", () => {
    const schema = type({
      nested: { at: "Date" },
      ids: "bigint[]",
      either: "string | Date",
      lookup: "Map",
      link: type.instanceOf(URL),
      fine: "unknown",
    });
    expect(() => defineTool({ name: "t", description: "d", inputSchema: schema, execute })).toThrow(
      /\{\} \(any value\): either \(a Date\), ids\[\] \(a bigint\), link \(an instance of URL\), lookup \(an instance of Map\), nested\.at \(a Date\)\. /,
    );
  });

  it("keeps arktype's other fallbacks: a .narrow() and a morph are offered as their input type", () => {
    const tool = defineTool({
      name: "t",
      description: "d",
      inputSchema: type({ name: type("string").narrow((text) => text.trim() !== ""), size: type("string").pipe((text) => text.length) }),
      execute,
    });
    expect(tool.jsonSchema).toEqual({
      type: "object",
      properties: { name: { type: "string" }, size: { type: "string" } },
      required: ["name", "size"],
    });
  });
});
