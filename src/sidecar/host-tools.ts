/**
 * The host's tools as SDK client tools. Each is a `defineTool` with its JSON
 * Schema as `inputSchema` and `validate: false`: the schema is advertised to
 * the model and nothing else — no key is stripped, no missing field refused,
 * no default filled in; the host gets every call's input exactly as the
 * runtime sent it and decides. `execute` computes nothing: it carries the call
 * to the host and returns the host's content blocks (or throws its message).
 */
import { defineTool, type ClientTool, type JsonSchemaObject, type ToolCallContext, type ToolResult } from "../tools/index.js";
import type { HostTool } from "./host-frames.js";

/** The SDK's default deadline of a tool call without its own `timeoutMs`. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

/** Runs one call at the host. */
export type RunAtHost = (tool: HostTool, input: unknown, timeoutMs: number, context: ToolCallContext) => Promise<ToolResult>;

/**
 * One client tool per host tool. Throws `ToolrelayError` `INVALID_TOOL_DEFINITION`
 * (from `defineTool`) for a bad name, description, schema, annotation or timeout.
 */
export function hostClientTools(tools: readonly HostTool[], sessionTimeoutMs: number | undefined, run: RunAtHost): ClientTool[] {
  return tools.map((tool) => {
    const timeoutMs = tool.timeout_ms ?? sessionTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    return defineTool({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.input_schema as JsonSchemaObject,
      validate: false,
      ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
      ...(tool.timeout_ms === undefined ? {} : { timeoutMs: tool.timeout_ms }),
      execute: (input, context) => run(tool, input, timeoutMs, context),
    });
  });
}
