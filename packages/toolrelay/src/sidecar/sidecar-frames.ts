/**
 * Frames the sidecar sends to the host (stdout), one zod schema each — the
 * only definition of their shape (the JSON Schemas are generated from them).
 * The sidecar checks every frame it writes against its schema in tests; a
 * host should ignore fields it does not know (later versions may add some).
 */
import { z } from "zod/v4";
import { annotationsSchema, cancelReasonSchema, idSchema, SIDECAR_PROTOCOL_VERSION } from "./protocol-values.js";
import { toolOutcomeSchema, turnFaultSchema } from "./turn-fault.js";
import { SIDECAR_ENCODINGS } from "./frame-encoding.js";

/** The answer to `hello`: the version both sides now speak. */
export const welcomeFrameSchema = z
  .strictObject({
    type: z.literal("welcome"),
    version: z
      .number()
      .int()
      .meta({ description: `The protocol version chosen (this sidecar: ${SIDECAR_PROTOCOL_VERSION}).` }),
    sidecar: z.strictObject({ name: z.literal("toolrelay-sidecar"), version: z.string() }),
    encoding: z.enum(SIDECAR_ENCODINGS),
    max_frame_bytes: z.number().int().meta({ description: "Largest frame body the sidecar accepts." }),
  })
  .meta({ title: "welcome", description: "sidecar → host. The answer to `hello`: the chosen version and the sidecar's limits." });

export const sessionOpenedFrameSchema = z
  .strictObject({
    type: z.literal("session_opened"),
    session: idSchema,
    agent_id: z.string(),
    conversation_id: z.string(),
    tools: z.array(z.string()).meta({ description: "The host tools registered with the runtime, in order." }),
  })
  .meta({ title: "session_opened", description: "sidecar → host. The runtime confirmed the session and its tools." });

const toolOwnerSchema = z.enum(["client", "runtime"]);

/** What the model (or a subagent's model) streamed. */
const streamEventSchemas = [
  z.strictObject({ kind: z.literal("assistant"), text: z.string(), message_id: z.string().nullable() }),
  z.strictObject({ kind: z.literal("reasoning"), text: z.string(), message_id: z.string().nullable() }),
  z.strictObject({
    kind: z.literal("tool_call"),
    tool_call_id: z.string(),
    tool_name: z.string(),
    input: z.unknown(),
    owner: toolOwnerSchema,
  }),
  z.strictObject({
    kind: z.literal("tool_output"),
    tool_call_id: z.string(),
    tool_name: z.string().nullable(),
    text: z.string(),
    owner: toolOwnerSchema,
  }),
  z.strictObject({
    kind: z.literal("tool_result"),
    tool_call_id: z.string(),
    tool_name: z.string().nullable(),
    is_error: z.boolean(),
    text: z.string(),
    owner: toolOwnerSchema,
  }),
  z.strictObject({ kind: z.literal("error"), message: z.string() }),
] as const;

export const streamEventSchema = z.discriminatedUnion("kind", [...streamEventSchemas]);
export type WireStreamEvent = z.infer<typeof streamEventSchema>;

export const turnEventSchema = z.discriminatedUnion("kind", [
  ...streamEventSchemas,
  z.strictObject({ kind: z.literal("subagent"), subagent_id: z.string(), event: streamEventSchema }),
]);
export type WireTurnEvent = z.infer<typeof turnEventSchema>;

export const turnEventFrameSchema = z
  .strictObject({ type: z.literal("turn_event"), session: idSchema, turn: idSchema, event: turnEventSchema })
  .meta({ title: "turn_event", description: "sidecar → host. One event of a running turn, in the order the runtime produced it." });

export const turnEndFrameSchema = z
  .strictObject({
    type: z.literal("turn_end"),
    session: idSchema,
    turn: idSchema,
    fault: turnFaultSchema.meta({ description: "How the turn ended: one name of the fault table (docs/sidecar.md)." }),
    stop: z
      .string()
      .nullable()
      .meta({ description: "The runtime's stop reason (end_turn, cancelled, error, ...); null when the runtime never ended the turn." }),
    message: z.string().nullable().meta({ description: "Why, for every fault but ok." }),
    text: z.string().meta({
      description:
        "All assistant text of the turn, concatenated in order with no separator (the SDK's TurnResult.text): two assistant messages run together; the assistant turn_events carry each message's message_id.",
    }),
    tool_calls: z
      .array(z.strictObject({ call: idSchema.nullable(), tool_call_id: z.string(), tool: z.string(), outcome: toolOutcomeSchema }))
      .meta({
        description:
          "Every client tool call of the turn, as it ended; call is null for one the host never saw (unknown tool, input too large, busy).",
      }),
  })
  .meta({ title: "turn_end", description: "sidecar → host. The end of a turn: exactly one per `send`, always after its events." });

export const toolCallFrameSchema = z
  .strictObject({
    type: z.literal("tool_call"),
    session: idSchema,
    call: idSchema.meta({ description: "The sidecar's id for this execution; answer with it." }),
    turn: idSchema.nullable().meta({ description: "The running turn, if any." }),
    tool: z.string(),
    tool_call_id: z.string(),
    agent_id: z.string(),
    conversation_id: z.string(),
    input: z.unknown().meta({ description: "The input exactly as the runtime sent it: never validated, stripped or filled in." }),
    timeout_ms: z.number().int().meta({ description: "The call's deadline; past it the sidecar sends `cancel` (reason timeout)." }),
  })
  .meta({ title: "tool_call", description: "sidecar → host. Run one tool: answer `tool_result` or `tool_error` with the same call id." });

export const cancelFrameSchema = z
  .strictObject({
    type: z.literal("cancel"),
    session: idSchema,
    call: idSchema,
    reason: cancelReasonSchema,
    message: z.string(),
  })
  .meta({
    title: "cancel",
    description:
      "sidecar → host. Stop working on a call: it timed out, was cancelled (abort, close) or abandoned (link lost). A later answer to it is ignored.",
  });

/** Whose tool an approval is about: a host tool with `needs_approval`, or one of the runtime's own (Bash, Write, ...). */
export const approvalKindSchema = z.enum(["client_tool", "runtime_tool"]);
export type SidecarApprovalKind = z.infer<typeof approvalKindSchema>;

export const approvalRequestFrameSchema = z
  .strictObject({
    type: z.literal("approval_request"),
    session: idSchema,
    approval: idSchema.meta({ description: "The sidecar's id for this approval; answer with it." }),
    turn: idSchema.nullable().meta({ description: "The running turn, if any." }),
    kind: approvalKindSchema.meta({
      description:
        "client_tool: a call of one of the host's needs_approval tools; runtime_tool: a call of one of the runtime's own tools (Bash, Write, ...) that the session's mode does not let run at once.",
    }),
    tool: z.string(),
    tool_call_id: z.string().nullable().meta({ description: "The model's id of the call; null when the runtime gave none." }),
    agent_id: z.string(),
    conversation_id: z.string(),
    input: z.unknown().meta({ description: "The call's input as the runtime sent it." }),
    annotations: annotationsSchema.meta({ description: "A host tool's annotations as declared; {} for a runtime tool." }),
    idempotency_key: z
      .string()
      .nullable()
      .meta({ description: "A client tool call's idempotency key (the same for every re-delivery of the call); null for a runtime tool." }),
    timeout_ms: z
      .number()
      .int()
      .meta({ description: "How long the sidecar waits for the answer (the session's approval_timeout_ms); then the call is denied." }),
  })
  .meta({
    title: "approval_request",
    description: "sidecar → host. May this call run? Answer `approval_response` with the same approval id.",
  });

export const approvalCancelFrameSchema = z
  .strictObject({
    type: z.literal("approval_cancel"),
    session: idSchema,
    approval: idSchema,
    reason: cancelReasonSchema,
    message: z.string(),
  })
  .meta({
    title: "approval_cancel",
    description:
      "sidecar → host. Stop asking: the approval is moot (it waited past its timeout_ms and was denied, the turn was aborted, the session closed). A later answer to it is ignored.",
  });

export const sessionClosedFrameSchema = z
  .strictObject({
    type: z.literal("session_closed"),
    session: idSchema,
    reason: z.enum(["closed", "shutdown", "link_closed"]).meta({
      description: "closed: the host's close_session; shutdown: the host's shutdown; link_closed: the link to the runtime closed for good.",
    }),
  })
  .meta({ title: "session_closed", description: "sidecar → host. A session is over; its id may be used again." });

/** Codes of `error` frames (the SDK's error codes, lower-cased, come on top for `open_session`). */
export const SIDECAR_ERROR_CODES = [
  "malformed_frame",
  "frame_too_large",
  "invalid_frame",
  "unknown_frame_type",
  "hello_required",
  "hello_repeated",
  "unsupported_version",
  "session_exists",
  "unknown_session",
  "turn_exists",
  "unknown_call",
  "unknown_approval",
  "shutting_down",
  "internal",
] as const;

export const errorFrameSchema = z
  .strictObject({
    type: z.literal("error"),
    code: z.string().meta({
      description: `One of ${SIDECAR_ERROR_CODES.join(", ")}, or for open_session and session errors the SDK's error code in lower case (invalid_options, connect_failed, ...).`,
    }),
    message: z.string(),
    frame_type: z.string().nullable().meta({ description: "The type of the frame this answers, when known." }),
    session: idSchema.nullable(),
    turn: idSchema.nullable(),
    call: idSchema.nullable(),
    approval: idSchema.optional().meta({ description: "The approval this is about (an approval_response's), only then." }),
  })
  .meta({
    title: "error",
    description:
      "sidecar → host. A frame could not be used, a session could not open, or a session reported a problem it handled. The sidecar goes on.",
  });

export const goodbyeFrameSchema = z.strictObject({ type: z.literal("goodbye") }).meta({
  title: "goodbye",
  description: "sidecar → host. The answer to `shutdown`: every session is closed; the sidecar exits with code 0.",
});

/** Every frame type the sidecar sends. */
export const SIDECAR_FRAME_TYPES = [
  "welcome",
  "session_opened",
  "turn_event",
  "turn_end",
  "tool_call",
  "cancel",
  "approval_request",
  "approval_cancel",
  "session_closed",
  "error",
  "goodbye",
] as const;
/** The `type` of a frame the sidecar sends. */
export type SidecarFrameType = (typeof SIDECAR_FRAME_TYPES)[number];

/** Every sidecar frame schema, by its `type`. */
export const sidecarFrameSchemas = {
  welcome: welcomeFrameSchema,
  session_opened: sessionOpenedFrameSchema,
  turn_event: turnEventFrameSchema,
  turn_end: turnEndFrameSchema,
  tool_call: toolCallFrameSchema,
  cancel: cancelFrameSchema,
  approval_request: approvalRequestFrameSchema,
  approval_cancel: approvalCancelFrameSchema,
  session_closed: sessionClosedFrameSchema,
  error: errorFrameSchema,
  goodbye: goodbyeFrameSchema,
} as const satisfies Record<SidecarFrameType, z.ZodType>;

export type SidecarFrame = { [K in SidecarFrameType]: z.infer<(typeof sidecarFrameSchemas)[K]> }[SidecarFrameType];
export type SidecarFrameOf<K extends SidecarFrameType> = z.infer<(typeof sidecarFrameSchemas)[K]>;

/** What an `error` frame is about: the type and the ids of the frame it answers, when known. */
export interface ErrorFrameAbout {
  frame_type?: string | null | undefined;
  session?: string | null | undefined;
  turn?: string | null | undefined;
  call?: string | null | undefined;
  /** Set only for an error about an approval. */
  approval?: string | undefined;
}

/** An `error` frame; whatever `about` leaves out is `null`. */
export function errorFrame(code: string, message: string, about: ErrorFrameAbout = {}): SidecarFrameOf<"error"> {
  return {
    type: "error",
    code,
    message,
    frame_type: about.frame_type ?? null,
    session: about.session ?? null,
    turn: about.turn ?? null,
    call: about.call ?? null,
    ...(about.approval === undefined ? {} : { approval: about.approval }),
  };
}
