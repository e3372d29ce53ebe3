import { describe, expect, it } from "vitest";
import { z } from "zod";
import { advertisedTimeoutMs, defineTool, ToolRegistry, type ClientTool } from "../../packages/toolrelay/src/tools/index.js";
import { externalToolsGroupSchema } from "../../packages/toolrelay/src/wire/index.js";

const weather = defineTool({
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: z.object({ city: z.string().describe("City name") }),
  annotations: { title: "Weather", readOnlyHint: true },
  timeoutMs: 10_000,
  execute: ({ city }) => city,
});
const clock = defineTool({ name: "clock", description: "The time", inputSchema: z.object({}), execute: () => "noon" });

describe("ToolRegistry", () => {
  it("looks tools up by exact name and lists names in registration order", () => {
    const registry = new ToolRegistry([weather, clock]);
    expect(registry.size).toBe(2);
    expect(registry.names()).toEqual(["get_weather", "clock"]);
    expect(registry.get("clock")).toBe(clock);
    expect(registry.get("Clock")).toBeUndefined();
    expect(registry.get("constructor")).toBeUndefined();
    expect(registry.get("__proto__")).toBeUndefined();
  });

  it("throws DUPLICATE_TOOL_NAME naming both positions", () => {
    const twin = defineTool({ name: "clock", description: "Another clock", inputSchema: z.object({}), execute: () => "" });
    expect(() => new ToolRegistry([clock, weather, twin])).toThrow(
      expect.objectContaining({ code: "DUPLICATE_TOOL_NAME", message: expect.stringContaining("tools[0] and tools[2]") }),
    );
    expect(() => new ToolRegistry([clock, clock])).toThrow(expect.objectContaining({ code: "DUPLICATE_TOOL_NAME" }));
  });

  it("refuses items defineTool did not make", () => {
    const fake = { ...clock } as ClientTool;
    expect(() => new ToolRegistry([clock, fake])).toThrow(
      expect.objectContaining({ code: "INVALID_TOOL_DEFINITION", message: expect.stringContaining("tools[1]") }),
    );
    expect(() => new ToolRegistry(null as unknown as ClientTool[])).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
  });

  it("builds one unscoped wire group with every tool: the title as label, the tool's timeout or the session default", () => {
    const groups = new ToolRegistry([weather, clock]).toWireGroups(60_000);
    expect(groups).toEqual([
      {
        tools: [
          {
            name: "get_weather",
            label: "Weather",
            description: "Current weather for a city",
            parameters: {
              type: "object",
              properties: { city: { type: "string", description: "City name" } },
              required: ["city"],
            },
            timeout_ms: 10_000,
          },
          { name: "clock", description: "The time", parameters: { type: "object", properties: {} }, timeout_ms: 60_000 },
        ],
      },
    ]);
    expect(groups[0]!.tools[1]).not.toHaveProperty("label");
    expect(externalToolsGroupSchema.safeParse(groups[0]).success).toBe(true);
    expect(groups[0]).not.toHaveProperty("scope_id");
  });

  it("returns no groups for an empty registry", () => {
    const registry = new ToolRegistry();
    expect(registry.size).toBe(0);
    expect(registry.names()).toEqual([]);
    expect(registry.toWireGroups(60_000)).toEqual([]);
  });

  it("advertises timeout_ms clamped to the 1,000-300,000 ms the runtime accepts", () => {
    const quick = defineTool({ name: "quick", description: "d", inputSchema: z.object({}), timeoutMs: 500, execute: () => "" });
    const advertised = (tool: ClientTool, sessionDefault: number) =>
      new ToolRegistry([tool]).toWireGroups(sessionDefault)[0]!.tools[0]!.timeout_ms;
    expect(advertised(quick, 60_000)).toBe(1_000);
    expect(advertised(clock, 900_000)).toBe(300_000);
    expect(advertised(clock, 1)).toBe(1_000);
    expect(advertised(clock, 1_500.2)).toBe(1_501);
    expect(advertisedTimeoutMs(Number.POSITIVE_INFINITY)).toBe(300_000);
    expect(advertisedTimeoutMs(300_000)).toBe(300_000);
  });

  it("accepts any iterable", () => {
    expect(new ToolRegistry(new Set([clock])).names()).toEqual(["clock"]);
  });
});
