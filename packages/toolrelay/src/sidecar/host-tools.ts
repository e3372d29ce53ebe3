/**
 * The host's tools as SDK client tools. Each is a `defineTool` with its JSON
 * Schema as `inputSchema` and `validate: false`: the schema is advertised to
 * the model and nothing else — no key is stripped, no missing field refused,
 * no default filled in; the host gets every call's input exactly as the
 * runtime sent it and decides. `execute` computes nothing: it carries the call
 * to the host and returns the host's content blocks (or throws its message).
 *
 * A host tool may take the name of one of the runtime's own tools (`Read`,
 * `Bash`, ...) only when its declaration says `overrides_runtime_tool: true`
 * (`defineTool`'s `overridesRuntimeTool`): it then replaces the runtime's tool.
 * `needs_approval: true` is `defineTool`'s `needsApproval: true`: the SDK asks
 * the session's approver (the host, see host-approvals.ts) before each call.
 */
import { isToolrelayError, ToolrelayError } from "../errors.js";
import { defineTool, type ClientTool, type JsonSchemaObject, type ToolCallContext, type ToolResult } from "../tools/index.js";
import type { HostTool } from "./host-frames.js";

/** The SDK's default deadline of a tool call without its own `timeoutMs`. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

/** Runs one call at the host. */
export type RunAtHost = (tool: HostTool, input: unknown, timeoutMs: number, context: ToolCallContext) => Promise<ToolResult>;

/**
 * One client tool per host tool. Throws `ToolrelayError` `INVALID_TOOL_DEFINITION`
 * (from `defineTool`) for a bad name, description, schema, annotation or timeout,
 * and `RESERVED_TOOL_NAME` naming the protocol's `overrides_runtime_tool` for the
 * name of one of the runtime's own tools declared without it.
 */
export function hostClientTools(tools: readonly HostTool[], sessionTimeoutMs: number | undefined, run: RunAtHost): ClientTool[] {
  return tools.map((tool, index) => {
    const timeoutMs = tool.timeout_ms ?? sessionTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    try {
      return defineTool({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.input_schema as JsonSchemaObject,
        validate: false,
        ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
        ...(tool.timeout_ms === undefined ? {} : { timeoutMs: tool.timeout_ms }),
        ...(tool.overrides_runtime_tool === undefined ? {} : { overridesRuntimeTool: tool.overrides_runtime_tool }),
        ...(tool.needs_approval === undefined ? {} : { needsApproval: tool.needs_approval }),
        execute: (input, context) => run(tool, input, timeoutMs, context),
      });
    } catch (error) {
      // defineTool's message names its own option (overridesRuntimeTool); a host declares the protocol's field.
      if (!isToolrelayError(error, "RESERVED_TOOL_NAME")) throw error;
      throw new ToolrelayError(
        "RESERVED_TOOL_NAME",
        `tools[${index}]: "${tool.name}" is the name of one of the runtime's own tools; a host tool with it replaces the runtime's ` +
          `"${tool.name}" for the model. Rename the tool, or set "overrides_runtime_tool": true in its declaration to replace the runtime's tool on purpose`,
        { cause: error, details: { name: tool.name, index } },
      );
    }
  });
}
