/**
 * `input` (C→R) with its two payloads we use, `create_message` and
 * `approval_response`, and the runtime's `input_accepted` answer.
 *
 * Outbound rules mirror `isInputCommand` / `isValidApprovalResponseBody` in
 * Letta Code 0.32.18's listener (docs/protocol.md#input), plus the router's
 * refusal of `type: "approval"` messages inside `create_message`.
 */
import { z } from "zod/v4";
import { jsonObjectSchema } from "./json-object.js";
import { requestIdSchema } from "./runtime-frames.js";
import { inboundRuntimeScopeSchema, runtimeScopeSchema } from "./runtime-scope.js";

/**
 * One message of `create_message`: a Letta `MessageCreate` (e.g.
 * `{ role: "user", content }`), optionally with a `client_message_id` that makes
 * it idempotent. Other Letta fields pass through unchecked.
 */
export const inputMessageSchema = z
  .looseObject({
    role: z.string().optional(),
    content: z.unknown().optional(),
    /** Messages are idempotent per `client_message_id`. */
    client_message_id: z.string().optional(),
  })
  .refine((message) => message.type !== "approval", {
    message: "approval messages are not allowed in create_message; send an approval_response",
    path: ["type"],
  });
export type InputMessage = z.infer<typeof inputMessageSchema>;

/** `input.payload` that starts (or queues) a turn. */
export const createMessagePayloadSchema = z.strictObject({
  kind: z.literal("create_message"),
  messages: z.array(inputMessageSchema),
  image_failure_mode: z.enum(["strict", "drop"]).optional(),
  /** Absent: the normal toolset. `[]`: no client tools. Must include our own tool names. */
  client_tool_allowlist: z.array(z.string()).optional(),
  client_toolset: z.strictObject({ base: z.string().optional(), include: z.array(z.string()).optional() }).optional(),
  /** Selects scoped external tools for this turn. */
  external_tool_scope_ids: z.array(z.string()).optional(),
  exclude_interactive_tools: z.boolean().optional(),
  response_format: jsonObjectSchema.optional(),
});
export type CreateMessagePayload = z.infer<typeof createMessagePayloadSchema>;

/** Allow a pending tool call, optionally with rewritten input. */
export const allowDecisionSchema = z.strictObject({
  behavior: z.literal("allow"),
  message: z.string().optional(),
  updated_input: jsonObjectSchema.nullable().optional(),
  selected_permission_suggestion_ids: z.array(z.string()).optional(),
});

/** Deny a pending tool call; `message` tells the model why. */
export const denyDecisionSchema = z.strictObject({
  behavior: z.literal("deny"),
  message: z.string(),
});

export const approvalDecisionSchema = z.discriminatedUnion("behavior", [allowDecisionSchema, denyDecisionSchema]);
export type ApprovalDecision = z.infer<typeof approvalDecisionSchema>;

/** `input.payload` answering a `control_request` (`request_id` is `perm-<tool_call_id>`). */
export const approvalResponsePayloadSchema = z
  .strictObject({
    kind: z.literal("approval_response"),
    request_id: z.string(),
    decision: approvalDecisionSchema.optional(),
    error: z.string().optional(),
  })
  .superRefine((payload, context) => {
    const hasDecision = payload.decision !== undefined;
    if (hasDecision === (payload.error !== undefined)) {
      context.addIssue({
        code: "custom",
        path: hasDecision ? ["error"] : [],
        message: hasDecision ? "send either decision or error, not both" : "needs either decision or error",
      });
    }
  });
export type ApprovalResponsePayload =
  | { kind: "approval_response"; request_id: string; decision: ApprovalDecision }
  | { kind: "approval_response"; request_id: string; error: string };

export const inputPayloadSchema = z.discriminatedUnion("kind", [createMessagePayloadSchema, approvalResponsePayloadSchema]);
export type InputPayload = CreateMessagePayload | ApprovalResponsePayload;

/** C→R: a user message or an approval answer. Answered with `input_accepted` only with a `request_id`. */
export const inputFrameSchema = z.strictObject({
  type: z.literal("input"),
  request_id: requestIdSchema.optional(),
  runtime: runtimeScopeSchema,
  payload: inputPayloadSchema,
});
export type InputFrame = Omit<z.infer<typeof inputFrameSchema>, "payload"> & { payload: InputPayload };

/** R→C: whether an `input` was taken (`disposition` `"started"` or `"queued"`). */
export const inputAcceptedFrameSchema = z.looseObject({
  type: z.literal("input_accepted"),
  request_id: z.string(),
  runtime: inboundRuntimeScopeSchema.optional(),
  accepted: z.boolean(),
  /** `"started"` or `"queued"` in 0.32. */
  disposition: z.string().optional(),
  error: z.string().optional(),
});
export type InputAcceptedFrame = z.infer<typeof inputAcceptedFrameSchema>;
