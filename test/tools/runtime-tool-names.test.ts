/**
 * A client tool may not take the name of one of the runtime's own tools (it would replace the
 * runtime's tool for the model without a word) unless it says `overridesRuntimeTool: true`.
 * integration/runtime-tool-names-real-peer.test.ts holds the list to what the real runtime offers.
 */
import { tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isToolrelayError, ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import { mcpClientTool } from "../../packages/toolrelay/src/mcp/mcp-client-tool.js";
import {
  defineTool,
  fromAiSdkTools,
  isRuntimeToolName,
  RUNTIME_TOOL_NAMES,
  TOOL_NAME_PATTERN,
  type ToolDefinition,
} from "../../packages/toolrelay/src/tools/index.js";

const base = {
  description: "Reads a file",
  inputSchema: z.object({ file_path: z.string() }),
  execute: () => "contents",
};

function refusal(run: () => unknown): ToolrelayError {
  try {
    run();
  } catch (error) {
    if (error instanceof ToolrelayError) return error;
    throw error;
  }
  throw new Error("no error was thrown");
}

describe("RUNTIME_TOOL_NAMES", () => {
  it("has the runtime's file, shell, memory and agent tools, each a valid tool name", () => {
    for (const name of ["Read", "Write", "Edit", "Bash", "memory", "Agent", "Task", "exec_command", "ApplyPatch"]) {
      expect(RUNTIME_TOOL_NAMES.has(name), name).toBe(true);
    }
    for (const name of RUNTIME_TOOL_NAMES) expect(TOOL_NAME_PATTERN.test(name), name).toBe(true);
  });

  it("compares exactly, as the runtime does", () => {
    expect(isRuntimeToolName("Read")).toBe(true);
    expect(isRuntimeToolName("read")).toBe(false);
    expect(isRuntimeToolName("Read ")).toBe(false);
    expect(isRuntimeToolName("read_file")).toBe(false);
  });
});

describe("defineTool and the runtime's tool names", () => {
  it.each([...RUNTIME_TOOL_NAMES])("refuses %s with RESERVED_TOOL_NAME, naming it and the way out", (name) => {
    const error = refusal(() => defineTool({ ...base, name }));
    expect(error).toMatchObject({ code: "RESERVED_TOOL_NAME", details: { name } });
    expect(error.message).toContain(`"${name}"`);
    expect(error.message).toContain("overridesRuntimeTool: true");
  });

  it("with overridesRuntimeTool: true, defines the tool and says it replaces the runtime's", () => {
    const read = defineTool({ ...base, name: "Read", overridesRuntimeTool: true });
    expect(read).toMatchObject({ name: "Read", overridesRuntimeTool: true });
  });

  it("overridesRuntimeTool: false is the default: refused the same", () => {
    expect(refusal(() => defineTool({ ...base, name: "Bash", overridesRuntimeTool: false }))).toMatchObject({ code: "RESERVED_TOOL_NAME" });
  });

  it("any other name needs nothing, and the flag is false unless given", () => {
    expect(defineTool({ ...base, name: "read_file" }).overridesRuntimeTool).toBe(false);
    expect(defineTool({ ...base, name: "read_file", overridesRuntimeTool: true }).overridesRuntimeTool).toBe(true);
  });

  it.each([["yes"], [1], [null]])("refuses a non-boolean overridesRuntimeTool (%j) with INVALID_TOOL_DEFINITION", (value) => {
    const definition = { ...base, name: "Read", overridesRuntimeTool: value } as unknown as ToolDefinition<z.ZodType>;
    const error = refusal(() => defineTool(definition));
    expect(error).toMatchObject({ code: "INVALID_TOOL_DEFINITION" });
    expect(error.message).toContain("overridesRuntimeTool must be a boolean");
  });
});

describe("other ways to make client tools", () => {
  const aiRead = tool({ description: "Reads", inputSchema: z.object({ file_path: z.string() }), execute: async () => "x" });

  it("fromAiSdkTools refuses a runtime tool's name, and takes the opt-in per name", () => {
    expect(refusal(() => fromAiSdkTools({ Read: aiRead }))).toMatchObject({ code: "RESERVED_TOOL_NAME" });
    const [read] = fromAiSdkTools({ Read: aiRead }, { overridesRuntimeTool: { Read: true } });
    expect(read).toMatchObject({ name: "Read", overridesRuntimeTool: true });
    // A name inherited from Object.prototype is not an opt-in.
    expect(fromAiSdkTools({ constructor: aiRead }, { overridesRuntimeTool: {} })[0]!.overridesRuntimeTool).toBe(false);
  });

  it("an MCP server's tool named like a runtime tool cannot become a client tool; the cause says why", () => {
    const error = refusal(() =>
      mcpClientTool(
        { name: "Read", description: "reads", inputSchema: { type: "object", properties: {} } },
        { prefix: "", server: 'MCP server "files"', timeoutMs: 1_000, call: async () => ({ content: [] }) },
      ),
    );
    expect(error).toMatchObject({ code: "INVALID_TOOL_DEFINITION" });
    expect(error.message).toContain("leave it out with filter");
    expect(isToolrelayError(error.cause, "RESERVED_TOOL_NAME")).toBe(true);
    // With a prefix it is another name.
    const prefixed = mcpClientTool(
      { name: "Read", description: "reads", inputSchema: { type: "object", properties: {} } },
      { prefix: "files_", server: 'MCP server "files"', timeoutMs: 1_000, call: async () => ({ content: [] }) },
    );
    expect(prefixed.name).toBe("files_Read");
  });
});
