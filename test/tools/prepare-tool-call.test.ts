import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { defineTool, jsonByteLength, prepareToolCall, ToolRegistry, utf8ByteLength } from "../../src/tools/index.js";

function registryWith(execute = vi.fn(() => "ran")) {
  const order = defineTool({
    name: "place_order",
    description: "Places an order",
    inputSchema: z.object({
      city: z.string(),
      quantity: z.number().int().min(1).default(1),
      items: z.array(z.object({ name: z.string(), notes: z.string().optional() })),
      "shipping address": z.string().optional(),
    }),
    execute,
  });
  const ping = defineTool({ name: "ping", description: "Ping", inputSchema: z.object({}), execute: () => "pong" });
  return { registry: new ToolRegistry([order, ping]), execute };
}

describe("prepareToolCall", () => {
  it("returns the tool and the schema's parsed output (defaults filled in)", () => {
    const { registry } = registryWith();
    const prepared = prepareToolCall(registry, { toolName: "place_order", input: { city: "Paris", items: [{ name: "tea" }] } });
    expect(prepared).toEqual({
      ok: true,
      tool: registry.get("place_order"),
      input: { city: "Paris", quantity: 1, items: [{ name: "tea" }] },
    });
  });

  it("reports an unknown tool with the available names", () => {
    const { registry } = registryWith();
    expect(prepareToolCall(registry, { toolName: "get_weather", input: {} })).toEqual({
      ok: false,
      outcome: { kind: "unknown-tool", toolName: "get_weather", available: ["place_order", "ping"] },
    });
  });

  it("checks the tool before the size: an oversize call to an unknown tool is unknown-tool", () => {
    const { registry } = registryWith();
    const prepared = prepareToolCall(registry, { toolName: "nope", input: {}, inputBytes: 10_000_000 });
    expect(prepared).toMatchObject({ ok: false, outcome: { kind: "unknown-tool" } });
  });

  it("refuses an input over the limit before the schema sees it (measured or given)", () => {
    const { registry } = registryWith();
    const input = { city: "x".repeat(2_000), items: [] };
    const bytes = JSON.stringify(input).length;
    expect(prepareToolCall(registry, { toolName: "place_order", input }, { maxInputBytes: 1_000 })).toEqual({
      ok: false,
      outcome: { kind: "input-too-large", bytes, limit: 1_000 },
    });
    expect(prepareToolCall(registry, { toolName: "ping", input: {}, inputBytes: 1_048_577 })).toEqual({
      ok: false,
      outcome: { kind: "input-too-large", bytes: 1_048_577, limit: 1_048_576 },
    });
    expect(prepareToolCall(registry, { toolName: "ping", input: {}, inputBytes: 1_048_576 })).toMatchObject({ ok: true });
  });

  it("counts UTF-8 bytes, not characters", () => {
    const { registry } = registryWith();
    const input = { city: "é".repeat(600), items: [] }; // 600 chars, 1,200 bytes
    expect(prepareToolCall(registry, { toolName: "place_order", input }, { maxInputBytes: 1_000 })).toMatchObject({
      ok: false,
      outcome: { kind: "input-too-large", bytes: jsonByteLength(input) },
    });
    expect(utf8ByteLength("aé€😀")).toBe(1 + 2 + 3 + 4);
    expect(utf8ByteLength("\ud800")).toBe(3);
  });

  it("reports wrong-typed input with each failing path, and never runs the handler", () => {
    const { registry, execute } = registryWith();
    const prepared = prepareToolCall(registry, {
      toolName: "place_order",
      input: { city: 7, quantity: 0, items: [{ name: "tea" }, { name: "milk" }, { notes: "x" }], "shipping address": 1 },
    });
    expect(prepared).toEqual({
      ok: false,
      outcome: {
        kind: "invalid-input",
        issues: [
          { path: "city", message: "Invalid input: expected string, received number" },
          { path: "quantity", message: "Too small: expected number to be >=1" },
          { path: "items[2].name", message: "Invalid input: expected string, received undefined" },
          { path: '["shipping address"]', message: "Invalid input: expected string, received number" },
        ],
      },
    });
    expect(execute).not.toHaveBeenCalled();
  });

  it("names (root) when the input itself is wrong", () => {
    const { registry } = registryWith();
    expect(prepareToolCall(registry, { toolName: "ping", input: "hello" })).toEqual({
      ok: false,
      outcome: { kind: "invalid-input", issues: [{ path: "(root)", message: "Invalid input: expected object, received string" }] },
    });
  });

  it("lets the schema alone decide: unknown keys reach a strict schema, which refuses them", () => {
    const strict = defineTool({ name: "strict", description: "d", inputSchema: z.strictObject({ a: z.string() }), execute: () => "" });
    const loose = defineTool({ name: "loose", description: "d", inputSchema: z.looseObject({ a: z.string() }), execute: () => "" });
    const registry = new ToolRegistry([strict, loose]);
    expect(prepareToolCall(registry, { toolName: "strict", input: { a: "x", b: 1 } })).toMatchObject({
      ok: false,
      outcome: { kind: "invalid-input", issues: [{ path: "(root)", message: expect.stringContaining('"b"') }] },
    });
    expect(prepareToolCall(registry, { toolName: "loose", input: { a: "x", b: 1 } })).toMatchObject({
      ok: true,
      input: { a: "x", b: 1 },
    });
  });

  it("reports a schema that cannot run synchronously instead of throwing", () => {
    const asyncCheck = defineTool({
      name: "async_check",
      description: "d",
      inputSchema: z.object({ a: z.string() }).refine(async () => true),
      execute: () => "",
    });
    const prepared = prepareToolCall(new ToolRegistry([asyncCheck]), { toolName: "async_check", input: { a: "x" } });
    expect(prepared).toMatchObject({
      ok: false,
      outcome: { kind: "invalid-input", issues: [{ path: "(root)", message: expect.stringContaining("input schema failed to run") }] },
    });
  });

  it("rejects an invalid maxInputBytes", () => {
    const { registry } = registryWith();
    expect(() => prepareToolCall(registry, { toolName: "ping", input: {} }, { maxInputBytes: -1 })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS" }),
    );
  });
});

