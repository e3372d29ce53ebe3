/**
 * `toolrelay/mcp`: MCP servers' tools as client tools. Needs the optional
 * peer dependency `@modelcontextprotocol/sdk` (1.32 or later).
 */
export { mcpTools } from "./mcp-tools.js";
export type {
  McpApprovalPolicy,
  McpCommonOptions,
  McpHttpOptions,
  McpStdioOptions,
  McpToolInfo,
  McpToolsOptions,
} from "./mcp-tools-options.js";
export { mcpToolResult, type McpCallResult } from "./mcp-tool-result.js";
export { modelToolName } from "./mcp-client-tool.js";
export { childEnvironment, INHERITED_ENV_VARS } from "./mcp-stdio-transport.js";
