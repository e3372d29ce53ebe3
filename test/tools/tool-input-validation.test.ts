import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { defineTool, ToolRegistry } from "../../packages/toolrelay/src/tools/index.js";
import { runTool } from "../support/run-tool.js";

function registryWith() {
  const execute = vi.fn((input: unknown) => JSON.stringify(input));
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

describe("validation by the tool's own schema (through the call path)", () => {
  it("hands the schema's parsed output (defaults filled in) to the callback", async () => {
    const { registry, execute } = registryWith();
    await expect(runTool(registry, "place_order", { city: "Paris", items: [{ name: "tea" }] })).resolves.toMatchObject({ kind: "ok" });
    expect(execute).toHaveBeenCalledWith({ city: "Paris", quantity: 1, items: [{ name: "tea" }] }, expect.anything());
  });

  it("counts UTF-8 bytes, not characters", async () => {
    const { registry } = registryWith();
    const input = { city: "é".repeat(600), items: [] }; // 600 chars, 1,200+ bytes
    await expect(runTool(registry, "place_order", input, { maxInputBytes: 1_000 })).resolves.toMatchObject({
      kind: "input-too-large",
      bytes: Buffer.byteLength(JSON.stringify(input)),
    });
  });

  it("reports wrong-typed input with each failing path, and never runs the handler", async () => {
    const { registry, execute } = registryWith();
    const input = { city: 7, quantity: 0, items: [{ name: "tea" }, { name: "milk" }, { notes: "x" }], "shipping address": 1 };
    await expect(runTool(registry, "place_order", input)).resolves.toEqual({
      kind: "invalid-input",
      issues: [
        { path: "city", message: "Invalid input: expected string, received number" },
        { path: "quantity", message: "Too small: expected number to be >=1" },
        { path: "items[2].name", message: "Invalid input: expected string, received undefined" },
        { path: '["shipping address"]', message: "Invalid input: expected string, received number" },
      ],
    });
    expect(execute).not.toHaveBeenCalled();
  });

  it("names (root) when the input itself is wrong", async () => {
    const { registry } = registryWith();
    await expect(runTool(registry, "ping", "hello")).resolves.toEqual({
      kind: "invalid-input",
      issues: [{ path: "(root)", message: "Invalid input: expected object, received string" }],
    });
  });

  it("lets the schema alone decide: unknown keys reach a strict schema, which refuses them", async () => {
    const strict = defineTool({ name: "strict", description: "d", inputSchema: z.strictObject({ a: z.string() }), execute: () => "" });
    const loose = defineTool({
      name: "loose",
      description: "d",
      inputSchema: z.looseObject({ a: z.string() }),
      execute: (input) => JSON.stringify(input),
    });
    const registry = new ToolRegistry([strict, loose]);
    await expect(runTool(registry, "strict", { a: "x", b: 1 })).resolves.toMatchObject({
      kind: "invalid-input",
      issues: [{ path: "(root)", message: expect.stringContaining('"b"') }],
    });
    await expect(runTool(registry, "loose", { a: "x", b: 1 })).resolves.toEqual({
      kind: "ok",
      content: [{ type: "text", text: '{"a":"x","b":1}' }],
      output: '{"a":"x","b":1}',
    });
  });

  it("reports a schema that cannot run synchronously instead of throwing", async () => {
    const asyncCheck = defineTool({
      name: "async_check",
      description: "d",
      inputSchema: z.object({ a: z.string() }).refine(async () => true),
      execute: () => "",
    });
    await expect(runTool(new ToolRegistry([asyncCheck]), "async_check", { a: "x" })).resolves.toMatchObject({
      kind: "invalid-input",
      issues: [{ path: "(root)", message: expect.stringContaining("input schema failed to run") }],
    });
  });
});
