/**
 * `stream_delta.delta`: one Letta streaming message or one runtime lifecycle
 * message, keyed by `message_type`. Every known `message_type` is checked for
 * the fields an SDK reads; any other `message_type` is kept as it came (the
 * runtime adds new ones), so an unknown delta never invalidates a frame.
 *
 * Shapes: letta-client `LettaStreamingResponse` (assistant, reasoning, tool
 * call, approval request, tool return, stop reason, error) and Letta Code
 * 0.32.18 `createLifecycleMessageBase` deltas (client_tool_start/end, status,
 * loop_error, retry, command and slash-command start/end).
 */
import { z } from "zod/v4";
import { inboundContentSchema } from "./content.js";
import { keyedUnion, knownKeyValues, type UnknownKeyed } from "./keyed-union.js";
import { checkToolReturns } from "./tool-returns.js";

const nullableString = z.string().nullable().optional();

/** Fields every Letta message and lifecycle delta may carry (all optional). */
const deltaBaseShape = {
  id: z.string().optional(),
  date: z.string().optional(),
  run_id: nullableString,
  otid: nullableString,
  step_id: nullableString,
  seq_id: z.number().nullable().optional(),
};

/** One (possibly partial) tool call inside a tool-call or approval-request delta. */
export const toolCallDeltaSchema = z.looseObject({
  name: nullableString,
  /** JSON text, possibly a fragment while streaming. */
  arguments: nullableString,
  tool_call_id: nullableString,
});
export type ToolCallDelta = z.infer<typeof toolCallDeltaSchema>;

const toolCallFields = {
  tool_call: toolCallDeltaSchema.nullable().optional(),
  tool_calls: z
    .union([z.array(toolCallDeltaSchema), toolCallDeltaSchema])
    .nullable()
    .optional(),
};

export const assistantMessageDeltaSchema = z.looseObject({
  ...deltaBaseShape,
  message_type: z.literal("assistant_message"),
  content: inboundContentSchema,
});

export const reasoningMessageDeltaSchema = z.looseObject({
  ...deltaBaseShape,
  message_type: z.literal("reasoning_message"),
  reasoning: z.string(),
});

export const toolCallMessageDeltaSchema = z.looseObject({
  ...deltaBaseShape,
  message_type: z.literal("tool_call_message"),
  ...toolCallFields,
});

export const approvalRequestMessageDeltaSchema = z.looseObject({
  ...deltaBaseShape,
  message_type: z.literal("approval_request_message"),
  ...toolCallFields,
});

/**
 * A tool's result. Two shapes (docs/protocol.md#stream_delta): the runtime's synthetic one
 * has the top-level `tool_call_id`, `status` and `tool_return` and the same result as the one entry
 * of `tool_returns`; a backend-streamed one (a tool the Letta API ran) has only `tool_returns`, one
 * entry per result. Read the results with `toolReturnsOf` (`tool-returns.ts`): unusable entries
 * are skipped there, and a delta without any usable result is refused here.
 */
export const toolReturnMessageDeltaSchema = z
  .looseObject({
    ...deltaBaseShape,
    message_type: z.literal("tool_return_message"),
    /** The runtime's copy of the result (for external tools: normalized, and cut to 30,000 characters). */
    tool_return: inboundContentSchema.optional(),
    status: z.enum(["success", "error"]).optional(),
    tool_call_id: z.string().optional(),
    /** One entry per result: `{ tool_call_id, status, tool_return, stdout?, stderr? }`; checked entry by entry. */
    tool_returns: z.array(z.unknown()).optional(),
    /** The tool name, when the runtime knows it. */
    name: nullableString,
  })
  .superRefine(checkToolReturns);

export const stopReasonDeltaSchema = z.looseObject({
  ...deltaBaseShape,
  message_type: z.literal("stop_reason"),
  /** e.g. `end_turn`, `requires_approval`, `cancelled`, `error`. */
  stop_reason: z.string(),
});

export const errorMessageDeltaSchema = z.looseObject({
  ...deltaBaseShape,
  message_type: z.literal("error_message"),
  message: z.string(),
  error_type: z.string().optional(),
  detail: z.string().optional(),
});

export const clientToolStartDeltaSchema = z.looseObject({
  ...deltaBaseShape,
  message_type: z.literal("client_tool_start"),
  tool_call_id: z.string(),
  tool_name: z.string().optional(),
  /** The arguments as JSON text. */
  tool_args: z.string().optional(),
});

export const clientToolEndDeltaSchema = z.looseObject({
  ...deltaBaseShape,
  message_type: z.literal("client_tool_end"),
  tool_call_id: z.string(),
  status: z.enum(["success", "error"]),
});

export const statusDeltaSchema = z.looseObject({
  ...deltaBaseShape,
  message_type: z.literal("status"),
  message: z.string(),
  /** `info`, `success` or `warning`. */
  level: z.string().optional(),
});

export const loopErrorDeltaSchema = z.looseObject({
  ...deltaBaseShape,
  message_type: z.literal("loop_error"),
  message: z.string(),
  stop_reason: z.string().optional(),
  /** A terminal loop error ends the turn. */
  is_terminal: z.boolean().optional(),
  api_error: z.unknown().optional(),
});

export const retryDeltaSchema = z.looseObject({
  ...deltaBaseShape,
  message_type: z.literal("retry"),
  message: z.string().optional(),
  reason: z.string().optional(),
  attempt: z.number().optional(),
  max_attempts: z.number().optional(),
  delay_ms: z.number().optional(),
});

export const commandDeltaSchema = z.looseObject({
  ...deltaBaseShape,
  message_type: z.literal(["command_start", "command_end", "slash_command_start", "slash_command_end"]),
  command_id: z.string().optional(),
  input: z.string().optional(),
  output: z.string().optional(),
  success: z.boolean().optional(),
});

const knownDeltaSchemas = [
  assistantMessageDeltaSchema,
  reasoningMessageDeltaSchema,
  toolCallMessageDeltaSchema,
  approvalRequestMessageDeltaSchema,
  toolReturnMessageDeltaSchema,
  stopReasonDeltaSchema,
  errorMessageDeltaSchema,
  clientToolStartDeltaSchema,
  clientToolEndDeltaSchema,
  statusDeltaSchema,
  loopErrorDeltaSchema,
  retryDeltaSchema,
  commandDeltaSchema,
] as const;

export type AssistantMessageDelta = z.infer<typeof assistantMessageDeltaSchema>;
export type ReasoningMessageDelta = z.infer<typeof reasoningMessageDeltaSchema>;
export type ToolCallMessageDelta = z.infer<typeof toolCallMessageDeltaSchema>;
export type ApprovalRequestMessageDelta = z.infer<typeof approvalRequestMessageDeltaSchema>;
export type ToolReturnMessageDelta = z.infer<typeof toolReturnMessageDeltaSchema>;
export type StopReasonDelta = z.infer<typeof stopReasonDeltaSchema>;
export type ErrorMessageDelta = z.infer<typeof errorMessageDeltaSchema>;
export type ClientToolStartDelta = z.infer<typeof clientToolStartDeltaSchema>;
export type ClientToolEndDelta = z.infer<typeof clientToolEndDeltaSchema>;
export type StatusDelta = z.infer<typeof statusDeltaSchema>;
export type LoopErrorDelta = z.infer<typeof loopErrorDeltaSchema>;
export type RetryDelta = z.infer<typeof retryDeltaSchema>;
export type CommandDelta = z.infer<typeof commandDeltaSchema>;

/** A delta whose `message_type` this SDK models (narrow it with `message_type`). */
export type KnownStreamDelta = z.infer<(typeof knownDeltaSchemas)[number]>;
/** A delta with a `message_type` this SDK does not model, kept as it came. */
export type OtherStreamDelta = UnknownKeyed<"message_type">;
/** `stream_delta.delta`. Use {@link isKnownStreamDelta} before switching on `message_type`. */
export type StreamDelta = KnownStreamDelta | OtherStreamDelta;
export type StreamDeltaMessageType = KnownStreamDelta["message_type"];

export const streamDeltaSchema = keyedUnion("message_type", knownDeltaSchemas);

const knownDeltaTypes = knownKeyValues("message_type", knownDeltaSchemas);

/** The `message_type`s that {@link streamDeltaSchema} checks. */
export const knownStreamDeltaTypes: ReadonlySet<string> = knownDeltaTypes;

/**
 * True when the delta's `message_type` is one this SDK models; after it,
 * `switch (delta.message_type)` narrows to the exact delta type.
 */
export function isKnownStreamDelta(delta: StreamDelta): delta is KnownStreamDelta {
  return knownDeltaTypes.has(delta.message_type);
}
