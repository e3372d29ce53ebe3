/**
 * tools/: defining client tools, the registry, schema → JSON Schema, preflight
 * and execution of one call. No sockets; imports only wire/, errors and zod.
 */
export {
  defineTool,
  isClientTool,
  MAX_TOOL_TIMEOUT_MS,
  TOOL_NAME_PATTERN,
  type ClientTool,
  type ToolCallContext,
  type ToolDefinition,
  type ToolHints,
} from "./define-tool.js";
export { toolJsonSchema, type ToolJsonSchema } from "./tool-json-schema.js";
export { ToolRegistry } from "./tool-registry.js";
export {
  errorResult,
  errorText,
  normalizeToolResult,
  NO_OUTPUT_TEXT,
  textResult,
  type NormalizedToolResult,
  type NormalizeToolResultOptions,
  type ToolResult,
  type ToolReturnObject,
  type ToolReturnValue,
} from "./tool-result.js";
export { clampToolText, DEFAULT_MAX_RESULT_CHARS, formatCount } from "./clamp-tool-text.js";
export { validateToolInput, type InputIssue, type InputValidation } from "./validate-tool-input.js";
export { DEFAULT_MAX_INPUT_BYTES, preflightToolCall, type PreflightOutcome, type PreflightRequest } from "./prepare-tool-call.js";
export { executeTool, type ExecutionOutcome } from "./execute-tool.js";
