/**
 * Frames the host sends to the sidecar (stdin), one zod schema each — the only
 * definition of their shape; their JSON Schemas (docs/sidecar.md, and
 * `sidecarFrameSchemas` in the package) are generated from these. Every schema
 * is strict: an unknown field is an `invalid_frame` error naming it, never
 * ignored (a typo must not silently change what a session does).
 */
import { z } from "zod/v4";
import { PERMISSION_MODES } from "../internal/permission-modes.js";
import { annotationsSchema, contentBlockSchema, idSchema, jsonObject } from "./protocol-values.js";

/** Opens the conversation: the protocol versions the host speaks. Must be the first frame. */
export const helloFrameSchema = z
  .strictObject({
    type: z.literal("hello"),
    versions: z
      .array(z.number().int().min(1))
      .min(1)
      .meta({ description: "Protocol versions the host speaks; the sidecar picks the highest it shares." }),
    client: z.strictObject({ name: z.string(), version: z.string().optional() }).optional(),
  })
  .meta({
    title: "hello",
    description:
      "host → sidecar. First frame: the protocol versions the host speaks. Answered by `welcome` or an `unsupported_version` error.",
  });

const localBackendSchema = z.strictObject({
  kind: z.literal("local"),
  url: z.string().meta({ description: "The app-server's address, e.g. ws://127.0.0.1:4500/ws." }),
  token: z.string().optional().meta({ description: "Sent as Authorization: Bearer. Default: none." }),
});

const cloudEnvironmentSchema = z.union([
  z.strictObject({ connection_id: z.string() }),
  z.strictObject({ name: z.string() }),
  z.strictObject({ id: z.string() }),
  z.strictObject({ device_id: z.string() }),
]);

const cloudBackendSchema = z.strictObject({
  kind: z.literal("cloud"),
  api_key: z.string().min(1).meta({ description: "The Letta API key. Required: the sidecar reads no credential from its environment." }),
  environment: cloudEnvironmentSchema,
  base_url: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
});

/** Where the runtime is. */
export const backendSchema = z.discriminatedUnion("kind", [localBackendSchema, cloudBackendSchema]);
export type SidecarBackend = z.infer<typeof backendSchema>;

/** One tool the host owns. Its schema is advertised to the model and never used to validate. */
export const hostToolSchema = z.strictObject({
  name: z.string().meta({
    description:
      "1–64 characters of [a-zA-Z0-9_-], unique in the session; the name of one of the runtime's own tools (Read, Bash, ...) only with overrides_runtime_tool.",
  }),
  description: z.string(),
  input_schema: jsonObject(
    "The tool's input as a JSON Schema object (type: object). Advertised only: every call reaches the host as the runtime sent it.",
  ),
  annotations: annotationsSchema.optional(),
  timeout_ms: z
    .number()
    .int()
    .optional()
    .meta({ description: "Deadline of one call, 1–300000 ms. Default: the session's tool_timeout_ms (60000)." }),
  overrides_runtime_tool: z.boolean().optional().meta({
    description:
      "true: the tool may take the name of one of the runtime's own tools (Read, Bash, Write, ...) and replaces it: the model is offered this tool in its place and its calls come to the host. Without it such a name fails open_session with reserved_tool_name. Default false.",
  }),
  needs_approval: z.boolean().optional().meta({
    description:
      "true: every call of the tool is first sent to the host as an approval_request, and runs only when the host's approval_response allows it; denied, the model reads that the user declined it and the tool is not called. Needs options.approvals: true (protocol version 2). Default false.",
  }),
});
export type HostTool = z.infer<typeof hostToolSchema>;

const sessionOptionsSchema = z.strictObject({
  mode: z.enum(PERMISSION_MODES).optional(),
  tool_timeout_ms: z.number().int().optional(),
  request_timeout_ms: z.number().int().optional(),
  max_input_bytes: z.number().int().optional(),
  reconnect_grace_ms: z.number().int().optional(),
  turn_stall_probe_ms: z.number().int().optional(),
  client_info: z.strictObject({ name: z.string(), title: z.string().optional(), version: z.string().optional() }).optional(),
  approvals: z.boolean().optional().meta({
    description:
      "true: the host answers approvals — approval_request frames for the calls of its needs_approval tools and for the runtime's own tools (Bash, Write, ...) that the mode does not let run at once. Without it those runtime tool calls are denied and a needs_approval tool fails open_session with invalid_options. Protocol version 2. Default false.",
  }),
  approval_timeout_ms: z.number().int().optional().meta({
    description:
      "How long an approval_request waits for the host's approval_response, 1000–299000 ms; then it is denied (the model reads that nobody answered) and the host gets approval_cancel. Default 120000.",
  }),
});
export type SidecarSessionOptions = z.infer<typeof sessionOptionsSchema>;

/** Starts a session: answered by `session_opened` or an `error` frame naming the session. */
export const openSessionFrameSchema = z
  .strictObject({
    type: z.literal("open_session"),
    session: idSchema.meta({ description: "The host's id for the session, unique in this sidecar." }),
    backend: backendSchema,
    agent: z.union([
      z.strictObject({ id: z.string() }),
      z.strictObject({ create: z.strictObject({ model: z.string(), name: z.string().optional() }) }),
    ]),
    conversation: z.string().optional().meta({ description: '"new" (default), "default", or a conversation id.' }),
    tools: z.array(hostToolSchema).default([]),
    options: sessionOptionsSchema.optional(),
  })
  .meta({
    title: "open_session",
    description:
      "host → sidecar. Connect to a runtime and register the host's tools. Answered by `session_opened`, or an `error` frame with the session's id.",
  });
export type OpenSessionFrame = z.infer<typeof openSessionFrameSchema>;

/**
 * An image of a `send`: its bytes in base64, in one of the formats Letta Code (0.32.18) takes in a
 * user message (it resizes these for the model; docs/sidecar.md, "Images in a message").
 */
const imageSourceSchema = z
  // A union of one: a source of another `type` (a URL, say) is one issue naming `source.type`.
  .discriminatedUnion("type", [
    z.strictObject({
      type: z.literal("base64"),
      media_type: z.enum(["image/png", "image/jpeg", "image/gif", "image/webp"]),
      data: z
        .string()
        .regex(/^[A-Za-z0-9+/]+={0,2}$/, "must be the image's bytes in base64, without a data: prefix")
        .meta({ description: "The image's bytes in base64 (no `data:` prefix)." }),
    }),
  ])
  .meta({ description: 'The image, in base64: `{ type: "base64", media_type, data }`.' });

const messagePartSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text"), text: z.string() }),
  z.strictObject({ type: z.literal("image"), source: imageSourceSchema }),
]);

/** Starts a turn: answered by `turn_event`s and exactly one `turn_end` with the same turn id. */
export const sendFrameSchema = z
  .strictObject({
    type: z.literal("send"),
    session: idSchema,
    turn: idSchema.meta({ description: "The host's id for the turn, echoed on its events and its turn_end." }),
    // The parts first: when both branches fail, the closest on a tie is theirs (the failing part is named).
    message: z.union([z.array(messagePartSchema).min(1), z.string()]),
  })
  .meta({
    title: "send",
    description: "host → sidecar. Send a user message: a turn. Answered by `turn_event`s and exactly one `turn_end`.",
  });
export type SendFrame = z.infer<typeof sendFrameSchema>;

/** Aborts the session's running turn (its turn_end says `cancelled`). */
export const abortFrameSchema = z
  .strictObject({
    type: z.literal("abort"),
    session: idSchema,
    turn: idSchema.optional().meta({ description: "Only this turn; default: whichever runs." }),
  })
  .meta({
    title: "abort",
    description: "host → sidecar. Abort the running turn; its pending tool calls get `cancel`, its turn_end has fault `cancelled`.",
  });

/** The host's answer to a `tool_call`: the result the model reads. MCP's CallToolResult shape. */
export const toolResultFrameSchema = z
  .strictObject({
    type: z.literal("tool_result"),
    session: idSchema,
    call: idSchema,
    content: z.array(contentBlockSchema),
    isError: z.boolean().optional().meta({ description: "true: a tool error the model reads as one. Default false." }),
  })
  .meta({ title: "tool_result", description: "host → sidecar. The answer to a `tool_call`: content blocks the model reads, as they are." });
export type ToolResultFrame = z.infer<typeof toolResultFrameSchema>;

/** The host could not run the tool: the model reads the message as a tool error. */
export const toolErrorFrameSchema = z
  .strictObject({ type: z.literal("tool_error"), session: idSchema, call: idSchema, message: z.string() })
  .meta({
    title: "tool_error",
    description: "host → sidecar. The tool failed (the handler raised): the model reads `message` as a tool error.",
  });
export type ToolErrorFrame = z.infer<typeof toolErrorFrameSchema>;

/**
 * The host's answer to an `approval_request`: allow (optionally with a replaced input) or deny (with
 * what the model reads). `updated_input` goes only with `allow: true`, `message` only with `allow: false`.
 */
export const approvalResponseFrameSchema = z
  .strictObject({
    type: z.literal("approval_response"),
    session: idSchema,
    approval: idSchema.meta({ description: "The id of the approval_request this answers." }),
    allow: z.boolean().meta({ description: "true: the call runs; false: it does not." }),
    message: z
      .string()
      .optional()
      .meta({ description: "With allow: false, the user's words: the model reads them. Default: none (the model reads a plain denial)." }),
    updated_input: jsonObject(
      "With allow: true, the input the call runs with instead of the model's (a client tool's call is checked against it again). Default: the model's input.",
    ).optional(),
  })
  .superRefine((frame, context) => {
    if (frame.allow && frame.message !== undefined)
      context.addIssue({
        code: "custom",
        path: ["message"],
        message: "message goes with allow: false (the model reads it as the denial's reason)",
      });
    if (!frame.allow && frame.updated_input !== undefined)
      context.addIssue({ code: "custom", path: ["updated_input"], message: "updated_input goes with allow: true" });
  })
  .meta({
    title: "approval_response",
    description:
      "host → sidecar. The answer to an `approval_request`: the call runs (allow: true) or the model reads that it was declined.",
  });
export type ApprovalResponseFrame = z.infer<typeof approvalResponseFrameSchema>;

/** Closes one session: answered by `session_closed`. */
export const closeSessionFrameSchema = z.strictObject({ type: z.literal("close_session"), session: idSchema }).meta({
  title: "close_session",
  description:
    "host → sidecar. Close a session: its running turn ends `session_closed`, pending calls are cancelled. Answered by `session_closed`.",
});

/** Closes every session and ends the sidecar: answered by `goodbye`, then exit 0. */
export const shutdownFrameSchema = z
  .strictObject({ type: z.literal("shutdown") })
  .meta({ title: "shutdown", description: "host → sidecar. Close every session, answer `goodbye` and exit with code 0." });

/** Every frame type the host sends. */
export const HOST_FRAME_TYPES = [
  "hello",
  "open_session",
  "send",
  "abort",
  "tool_result",
  "tool_error",
  "approval_response",
  "close_session",
  "shutdown",
] as const;
/** The `type` of a frame the host sends. */
export type HostFrameType = (typeof HOST_FRAME_TYPES)[number];

/** Every host frame schema, by its `type`. */
export const hostFrameSchemas = {
  hello: helloFrameSchema,
  open_session: openSessionFrameSchema,
  send: sendFrameSchema,
  abort: abortFrameSchema,
  tool_result: toolResultFrameSchema,
  tool_error: toolErrorFrameSchema,
  approval_response: approvalResponseFrameSchema,
  close_session: closeSessionFrameSchema,
  shutdown: shutdownFrameSchema,
} as const satisfies Record<HostFrameType, z.ZodType>;

export type HostFrame = { [K in HostFrameType]: z.infer<(typeof hostFrameSchemas)[K]> }[HostFrameType];
