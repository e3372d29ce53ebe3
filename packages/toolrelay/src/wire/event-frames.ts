/**
 * Runtime events (R→C), all lenient: `stream_delta`, the state snapshots
 * (`update_loop_status`, `update_device_status`, `update_queue`,
 * `update_subagent_state`), `turn_finished`, and `control_request`
 * (`can_use_tool`). Each carries the runtime envelope `{ runtime, event_seq,
 * emitted_at, idempotency_key }` (docs/protocol.md#event-envelope); snapshots may be coalesced,
 * so treat them as state, not events.
 */
import { z } from "zod/v4";
import { isJsonObject, jsonObjectSchema } from "./json-object.js";
import { inboundRuntimeScopeSchema } from "./runtime-scope.js";
import { streamDeltaSchema } from "./stream-delta.js";

/** The envelope `emitProtocolV2Message` adds to every runtime event. */
export const runtimeEnvelopeShape = {
  runtime: inboundRuntimeScopeSchema.optional(),
  /** Per listener connection, across all runtimes; starts at 1. */
  event_seq: z.number().optional(),
  /** ISO time of emission. */
  emitted_at: z.string().optional(),
  /** `${type}:${event_seq}:${uuid}`: collapses relay duplicates of one emission only. */
  idempotency_key: z.string().optional(),
};

/** R→C: one streamed message or lifecycle delta. */
export const streamDeltaFrameSchema = z.looseObject({
  type: z.literal("stream_delta"),
  delta: streamDeltaSchema,
  /** Set when the delta comes from a subagent's stream. */
  subagent_id: z.string().optional(),
  ...runtimeEnvelopeShape,
});
export type StreamDeltaFrame = z.infer<typeof streamDeltaFrameSchema>;

/** Loop statuses of Letta Code 0.32 (others may appear). */
export type LoopStatusName =
  | "SENDING_API_REQUEST"
  | "WAITING_FOR_API_RESPONSE"
  | "RETRYING_API_REQUEST"
  | "PROCESSING_API_RESPONSE"
  | "EXECUTING_CLIENT_SIDE_TOOL"
  | "EXECUTING_COMMAND"
  | "WAITING_ON_APPROVAL"
  | "WAITING_ON_INPUT"
  | (string & {});

/** `update_loop_status.loop_status`. */
export const loopStatusSchema = z.looseObject({
  status: z.string() as z.ZodType<LoopStatusName>,
  active_run_ids: z.array(z.string()).optional(),
  client_message_ids_by_run_id: z
    .custom<Record<string, string[]>>(
      (value) =>
        isJsonObject(value) && Object.values(value).every((ids) => Array.isArray(ids) && ids.every((id) => typeof id === "string")),
      { message: "Invalid input: expected an object of string arrays" },
    )
    .optional(),
  /** Non-empty only while `EXECUTING_CLIENT_SIDE_TOOL`: the self-healing list of running tool calls. */
  executing_tool_call_ids: z.array(z.string()).optional(),
});
export type LoopStatus = z.infer<typeof loopStatusSchema>;

/** R→C: the runtime's loop state (a snapshot). */
export const updateLoopStatusFrameSchema = z.looseObject({
  type: z.literal("update_loop_status"),
  loop_status: loopStatusSchema,
  ...runtimeEnvelopeShape,
});
export type UpdateLoopStatusFrame = z.infer<typeof updateLoopStatusFrameSchema>;

/** R→C: device state (cwd, permission mode, toolset, pending control requests...; a snapshot). */
export const updateDeviceStatusFrameSchema = z.looseObject({
  type: z.literal("update_device_status"),
  device_status: jsonObjectSchema,
  ...runtimeEnvelopeShape,
});
export type UpdateDeviceStatusFrame = z.infer<typeof updateDeviceStatusFrameSchema>;

/** R→C: the input queue (a snapshot) and the items that just left it. */
export const updateQueueFrameSchema = z.looseObject({
  type: z.literal("update_queue"),
  queue: z.array(jsonObjectSchema),
  /** `{ client_message_id, disposition }` of items removed since the last snapshot. */
  removed: z.array(jsonObjectSchema).optional(),
  ...runtimeEnvelopeShape,
});
export type UpdateQueueFrame = z.infer<typeof updateQueueFrameSchema>;

/** R→C: the runtime's subagents (a snapshot). */
export const updateSubagentStateFrameSchema = z.looseObject({
  type: z.literal("update_subagent_state"),
  subagents: z.array(jsonObjectSchema),
  ...runtimeEnvelopeShape,
});
export type UpdateSubagentStateFrame = z.infer<typeof updateSubagentStateFrameSchema>;

/** R→C: a turn ended (`stop_reason` e.g. `end_turn`, `cancelled`, `error`). */
export const turnFinishedFrameSchema = z.looseObject({
  type: z.literal("turn_finished"),
  turn_id: z.string(),
  stop_reason: z.string(),
  run_id: z.string().optional(),
  error: z.string().optional(),
  usage: jsonObjectSchema.optional(),
  ...runtimeEnvelopeShape,
});
export type TurnFinishedFrame = z.infer<typeof turnFinishedFrameSchema>;

/** `control_request.request` for `can_use_tool`: may this tool call run? */
export const canUseToolRequestSchema = z.looseObject({
  subtype: z.literal("can_use_tool"),
  tool_name: z.string(),
  input: jsonObjectSchema,
  tool_call_id: z.string(),
  /** Ways to allow this call from now on; send a chosen `id` in `selected_permission_suggestion_ids`. */
  permission_suggestions: z.array(z.looseObject({ id: z.string(), text: z.string() })).optional(),
  blocked_path: z.string().nullable().optional(),
  diffs: z.array(z.unknown()).optional(),
});
export type CanUseToolRequest = z.infer<typeof canUseToolRequestSchema>;

/**
 * R→C: a permission request (`request.subtype` is `can_use_tool`; Letta Code
 * 0.32 sends no other subtype, and one we cannot answer decodes as invalid).
 * Answer with `input { payload: { kind:
 * "approval_response", request_id } }`. Replayed on every new connection and
 * `sync`: de-duplicate by `[agent_id, conversation_id, request_id]`.
 */
export const controlRequestFrameSchema = z.looseObject({
  type: z.literal("control_request"),
  /** `perm-<tool_call_id>`. */
  request_id: z.string(),
  request: canUseToolRequestSchema,
  agent_id: z.string().nullable().optional(),
  conversation_id: z.string().nullable().optional(),
  ...runtimeEnvelopeShape,
});
export type ControlRequestFrame = z.infer<typeof controlRequestFrameSchema>;
