/**
 * `mcpTools()`: an MCP server's tools as client tools of a session.
 *
 * ```ts
 * const session = await createSession({
 *   backend,
 *   agent,
 *   tools: [mcpTools({ command: "node", args: [serverPath, root], name: "filesystem" })],
 * });
 * ```
 *
 * The value is a description: each session that gets it starts its own
 * connection (its own child process for a stdio server) before it registers
 * with the runtime, re-registers the tools when the server's list changes,
 * and stops the connection when it closes.
 */
import { defineToolSource, type ToolSource } from "../tools/index.js";
import { McpConnection } from "./mcp-connection.js";
import { resolveMcpOptions, type McpToolsOptions } from "./mcp-tools-options.js";

/**
 * An MCP server as a tool source for `createSession({ tools })`. Checks the
 * options now and throws `ToolrelayError("INVALID_OPTIONS")` naming a bad one;
 * starting the server happens in `createSession` (which rejects with
 * `TOOL_SOURCE_FAILED` when it cannot).
 */
export function mcpTools(options: McpToolsOptions): ToolSource {
  const resolved = resolveMcpOptions(options);
  return defineToolSource({
    label: `MCP server "${resolved.name}"`,
    open: ({ signal }) => McpConnection.open(resolved, signal),
  });
}
