/**
 * External tools: the definitions we register (`runtime_start.external_tools`,
 * `runtime_external_tools_update`), the runtime's `external_tool_call_request`
 * and our `external_tool_call_response`.
 *
 * Outbound rules mirror the listener's external tool protocol (docs/protocol.md#external_tool_call_response):
 * `name` and `description` strings, `label` a string or absent, `parameters` a
 * plain object, `scope_id` a string or absent; a response has a string
 * `request_id` and either `error` (a string) or `result` with `content` an
 * array of objects and `is_error` a boolean or absent. The runtime drops any
 * other frame without a word (docs/protocol.md#silent-drops), so we reject it before sending.
 */
import { z } from "zod/v4";
import { RUNTIME_MAX_TOOL_TIMEOUT_MS, RUNTIME_MIN_TOOL_TIMEOUT_MS } from "../internal/runtime-limits.js";
import { wireContentBlockSchema, type WireContentBlock } from "./content.js";
import { isJsonObject, jsonObjectSchema } from "./json-object.js";
import { inboundRuntimeScopeSchema } from "./runtime-scope.js";

/** One client tool as the runtime sees it. */
export const externalToolDefinitionSchema = z.strictObject({
  /** The model-facing tool name. */
  name: z.string(),
  /** A display label; absent means the name. */
  label: z.string().optional(),
  description: z.string(),
  /** The tool's input as a JSON Schema object. */
  parameters: jsonObjectSchema,
  /**
   * How long the runtime waits for this tool's answer, in ms (1,000–300,000).
   * Newer runtimes honour it (a value out of range drops the whole
   * `runtime_start` silently); 0.32.18 ignores it and waits 300 s.
   */
  timeout_ms: z.number().int().min(RUNTIME_MIN_TOOL_TIMEOUT_MS).max(RUNTIME_MAX_TOOL_TIMEOUT_MS).optional(),
});
export type ExternalToolDefinition = z.infer<typeof externalToolDefinitionSchema>;

/** A group of tools, optionally behind a `scope_id` that turns opt into. */
export const externalToolsGroupSchema = z.strictObject({
  /** Turns see these tools only when their `external_tool_scope_ids` name this scope. */
  scope_id: z.string().optional(),
  tools: z.array(externalToolDefinitionSchema),
});
export type ExternalToolsGroup = z.infer<typeof externalToolsGroupSchema>;

/** `result` of a tool response: content blocks, and `is_error` for a failed tool. */
export const toolCallResultSchema = z.strictObject({
  content: z.array(wireContentBlockSchema),
  is_error: z.boolean().optional(),
});
/**
 * A tool response's `result`, spelled out for the public types (the call journal's records and the
 * `recorded` outcome carry it): the schema above is still its definition (the check below fails to
 * compile when they differ).
 */
export type ToolCallResult = { content: WireContentBlock[]; is_error?: boolean | undefined };
type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const resultSchemaAndTypeAgree: SameType<ToolCallResult, z.infer<typeof toolCallResultSchema>> = true;
void resultSchemaAndTypeAgree;

/** The body of an `external_tool_call_response`: a `result`, or an `error` string (never both). */
export const toolCallResponseBodySchema = z.union([
  z.strictObject({ result: toolCallResultSchema }),
  z.strictObject({ error: z.string() }),
]);
export type ToolCallResponseBody = { result: ToolCallResult } | { error: string };

/** C→R: the answer to one `external_tool_call_request`, echoing its `request_id`. */
export const externalToolCallResponseFrameSchema = z
  .strictObject({
    type: z.literal("external_tool_call_response"),
    request_id: z.string(),
    result: toolCallResultSchema.optional(),
    error: z.string().optional(),
  })
  .superRefine((frame, context) => {
    const hasResult = frame.result !== undefined;
    const hasError = frame.error !== undefined;
    if (hasResult === hasError) {
      context.addIssue({
        code: "custom",
        path: hasResult ? ["error"] : [],
        message: hasResult ? "send either result or error, not both" : "needs either result or error",
      });
    }
  });
export type ExternalToolCallResponseFrame = { type: "external_tool_call_response"; request_id: string } & ToolCallResponseBody;

/** R→C: the runtime asks us to run one client tool. */
export const externalToolCallRequestFrameSchema = z.looseObject({
  type: z.literal("external_tool_call_request"),
  /** `external-tool-<uuid>`, new for every attempt; echo it in the response. */
  request_id: z.string(),
  /** Present for runtime-registered tools; `agent_id` may be `null`. */
  runtime: inboundRuntimeScopeSchema.optional(),
  /** Present when the tool's group had a `scope_id`. */
  scope_id: z.string().optional(),
  /** The model's id for this tool call (stable across attempts). */
  tool_call_id: z.string(),
  tool_name: z.string(),
  /** The tool arguments (after any approval or mod rewrite). */
  input: jsonObjectSchema,
});
export type ExternalToolCallRequestFrame = z.infer<typeof externalToolCallRequestFrameSchema>;

/**
 * A quick accept of the one frame on every call's path: `true` only for a frame that
 * {@link externalToolCallRequestFrameSchema} accepts (a property test holds it to that). Anything
 * else goes to the schema, which accepts it or says what is wrong; so this never decides a refusal.
 */
export function isPlainExternalToolCallRequest(frame: Record<string, unknown>): boolean {
  if (frame.type !== "external_tool_call_request") return false;
  const { runtime, scope_id: scopeId } = frame;
  if (typeof frame.request_id !== "string" || typeof frame.tool_call_id !== "string" || typeof frame.tool_name !== "string") return false;
  if (scopeId !== undefined && typeof scopeId !== "string") return false;
  if (!isJsonObject(frame.input)) return false;
  if (runtime === undefined) return true;
  if (!isJsonObject(runtime) || typeof runtime.conversation_id !== "string") return false;
  const { agent_id: agentId, acting_user_id: actingUserId } = runtime;
  return (agentId === null || typeof agentId === "string") && (actingUserId === undefined || typeof actingUserId === "string");
}
