/**
 * tools/: defining client tools (zod, Standard Schema or JSON Schema input),
 * the registry, tool sources and the execution of one call. No
 * sockets; imports only wire/, errors, zod, ajv and Standard Schema types.
 */
export {
  defineTool,
  isClientTool,
  MAX_TOOL_TIMEOUT_MS,
  TOOL_NAME_PATTERN,
  type ClientTool,
  type NeedsApproval,
  type ToModelOutput,
  type ToolModelOutputCall,
  type ToolAnnotations,
  type ToolApprovalContext,
  type ToolCallContext,
  type ToolDefinition,
  type ToolDefinitionWithOutput,
} from "./define-tool.js";
export {
  resolveToolOutput,
  type JsonSchemaDocument,
  type OutputValidator,
  type ToolOutputInputOf,
  type ToolOutputOf,
  type ToolOutputSchema,
} from "./tool-output-schema.js";
export {
  isZodSchema,
  resolveToolInput,
  type InputValidationOf,
  type JsonSchemaObject,
  type ResolvedToolInput,
  type ToolInputKind,
  type ToolInputOf,
  type ToolInputSchema,
} from "./tool-input-schema.js";
export { asToolJsonSchema, toolJsonSchema, type ToolJsonSchema } from "./tool-json-schema.js";
export { compileJsonSchemaValidator, type JsonSchemaValidator } from "./json-schema-validator.js";
export { isStandardSchema, validateStandardInput } from "./standard-schema-input.js";
export { isRuntimeToolName, RUNTIME_TOOL_NAMES } from "./runtime-tool-names.js";
export { advertisedTimeoutMs, MIN_ADVERTISED_TIMEOUT_MS, ToolRegistry, type ToolLookup } from "./tool-registry.js";
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
export { validateToolInput } from "./validate-tool-input.js";
export { findProtoKey, type InputIssue, type InputValidation } from "./input-issues.js";
export { executeTool, type ExecutionOutcome } from "./execute-tool.js";
export { defineToolSource, isToolSource, type OpenToolSource, type ToolSource } from "./tool-source.js";
export {
  fromAiSdkTools,
  type AiSdkClientToolOf,
  type AiSdkToolLike,
  type AiSdkToolOutputOf,
  type FromAiSdkToolsOptions,
} from "./ai-sdk-tools.js";
export { ToolCallAbortError, type ToolCallAbortKind } from "./tool-call-abort-error.js";
