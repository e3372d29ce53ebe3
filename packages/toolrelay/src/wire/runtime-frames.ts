/**
 * Runtime lifecycle frames: `runtime_start`, `runtime_external_tools_update`,
 * `sync`, `abort_message`, `app_server_info` (C→R, strict) and their
 * responses (R→C, lenient: unknown fields are kept).
 *
 * Outbound rules mirror the listener's own validation in Letta Code 0.32.18
 * (`validateRuntimeStartShape` and friends): docs/protocol.md#runtime_start,
 * docs/protocol.md#runtime_external_tools_update, docs/protocol.md#sync,
 * docs/protocol.md#abort_message.
 */
import { z } from "zod/v4";
import { PERMISSION_MODES } from "../internal/permission-modes.js";
import { jsonObjectSchema } from "./json-object.js";
import { externalToolsGroupSchema } from "./tool-call-frames.js";
import { inboundRuntimeScopeSchema, runtimeScopeKey, runtimeScopeSchema } from "./runtime-scope.js";

/** A `request_id` we mint: a non-empty string. */
export const requestIdSchema = z.string().min(1);

/** Permission modes a runtime accepts. */
export const permissionModeSchema = z.enum(PERMISSION_MODES);
export type PermissionMode = z.infer<typeof permissionModeSchema>;

/** Skill sources a runtime accepts. */
export const skillSourceSchema = z.enum(["bundled", "global", "agent", "project"]);
export type SkillSource = z.infer<typeof skillSourceSchema>;

const stringArraySchema = z.array(z.string());

/** `runtime_start.create_agent`: create a new agent from a Letta `AgentCreateParams` body. */
export const createAgentOptionsSchema = z.strictObject({
  body: jsonObjectSchema,
  /** Default true. */
  pin_global: z.boolean().optional(),
  /** Default true. */
  memfs: z.boolean().optional(),
});

/** `runtime_start.create_conversation`: create a new conversation (optional body). */
export const createConversationOptionsSchema = z.strictObject({ body: jsonObjectSchema.optional() });

/** `runtime_start.execution_settings` (mirrors `isRuntimeExecutionSettings`). */
export const executionSettingsSchema = z.strictObject({
  allowed_tools: stringArraySchema,
  disallowed_tools: stringArraySchema,
  tools: stringArraySchema.optional(),
  preload_skills: stringArraySchema.optional(),
  disable_memory_guard: z.boolean(),
  max_turns: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  agent_role: z.literal("subagent").optional(),
  parent_agent_id: z.string().optional(),
  transcript_path: z.string().optional(),
  memory_directory: z.string().optional(),
});

/** C→R: start (or re-attach) a runtime and register this connection's external tools for it. */
export const runtimeStartFrameSchema = z
  .strictObject({
    type: z.literal("runtime_start"),
    request_id: requestIdSchema,
    /** Exactly one of `agent_id` / `create_agent`. */
    agent_id: z.string().min(1).optional(),
    create_agent: createAgentOptionsSchema.optional(),
    /** At most one of `conversation_id` / `create_conversation`; neither creates a new conversation. */
    conversation_id: z.string().min(1).optional(),
    create_conversation: createConversationOptionsSchema.optional(),
    conversation_source_tags: stringArraySchema.optional(),
    cwd: z.string().nullable().optional(),
    mode: permissionModeSchema.optional(),
    execution_settings: executionSettingsSchema.optional(),
    workspace_sandbox: z.strictObject({ root: z.string(), isolation_root: z.string() }).optional(),
    skill_sources: z.array(skillSourceSchema).optional(),
    preserve_skill_sources: z.boolean().optional(),
    client_info: z.strictObject({ name: z.string(), title: z.string().optional(), version: z.string().optional() }).optional(),
    /** Default true. */
    recover_approvals: z.boolean().optional(),
    /** Default true. */
    force_device_status: z.boolean().optional(),
    /** Answer after the state replay instead of before it. Default false. */
    wait_for_replay: z.boolean().optional(),
    teleport_id: z.string().optional(),
    /** REPLACES this connection's tools for the runtime; absent means none. */
    external_tools: z.array(externalToolsGroupSchema).optional(),
  })
  .superRefine((frame, context) => {
    const hasAgent = frame.agent_id !== undefined;
    if (hasAgent === (frame.create_agent !== undefined)) {
      context.addIssue({
        code: "custom",
        path: hasAgent ? ["create_agent"] : [],
        message: "needs exactly one of agent_id or create_agent",
      });
    }
    if (frame.conversation_id !== undefined && frame.create_conversation !== undefined) {
      context.addIssue({
        code: "custom",
        path: ["create_conversation"],
        message: "conversation_id cannot be combined with create_conversation",
      });
    }
  });
export type RuntimeStartFrame = z.infer<typeof runtimeStartFrameSchema>;

/** One entry of `runtime_external_tools_update.updates`. */
export const externalToolsUpdateSchema = z.strictObject({
  /** Non-empty; each runtime may appear once across the whole frame. */
  runtimes: z.array(runtimeScopeSchema).min(1),
  /** Replaces the tools of every listed runtime; `[]` removes them. */
  external_tools: z.array(externalToolsGroupSchema),
});
export type ExternalToolsUpdate = z.infer<typeof externalToolsUpdateSchema>;

/** C→R: replace this connection's external tools for already-started runtimes. */
export const runtimeExternalToolsUpdateFrameSchema = z
  .strictObject({
    type: z.literal("runtime_external_tools_update"),
    request_id: requestIdSchema,
    updates: z.array(externalToolsUpdateSchema),
  })
  .superRefine((frame, context) => {
    const seen = new Set<string>();
    frame.updates.forEach((update, updateIndex) => {
      update.runtimes.forEach((runtime, runtimeIndex) => {
        const key = runtimeScopeKey(runtime);
        if (seen.has(key)) {
          context.addIssue({
            code: "custom",
            path: ["updates", updateIndex, "runtimes", runtimeIndex],
            message: "the same runtime appears twice in one update frame",
          });
        }
        seen.add(key);
      });
    });
  });
export type RuntimeExternalToolsUpdateFrame = z.infer<typeof runtimeExternalToolsUpdateFrameSchema>;

/** C→R: replay state (pending approvals, status snapshots). Answered only with a `request_id`. */
export const syncFrameSchema = z.strictObject({
  type: z.literal("sync"),
  runtime: runtimeScopeSchema,
  request_id: requestIdSchema.optional(),
  /** Default true. */
  recover_approvals: z.boolean().optional(),
  /** Default false. */
  force_device_status: z.boolean().optional(),
  resume_interrupted_turn: z.boolean().optional(),
});
export type SyncFrame = z.infer<typeof syncFrameSchema>;

/** C→R: interrupt the runtime's active turn. Answered only with a `request_id`. */
export const abortMessageFrameSchema = z.strictObject({
  type: z.literal("abort_message"),
  runtime: runtimeScopeSchema,
  request_id: requestIdSchema.optional(),
  run_id: z.string().nullable().optional(),
});
export type AbortMessageFrame = z.infer<typeof abortMessageFrameSchema>;

/** C→R: ask for the app-server's version and capabilities. */
export const appServerInfoFrameSchema = z.strictObject({
  type: z.literal("app_server_info"),
  request_id: requestIdSchema,
});
export type AppServerInfoFrame = z.infer<typeof appServerInfoFrameSchema>;

// ---- responses (R→C) ----

/** R→C: the answer to `runtime_start`. `runtime` is null on failure. */
export const runtimeStartResponseFrameSchema = z.looseObject({
  type: z.literal("runtime_start_response"),
  request_id: z.string(),
  success: z.boolean(),
  runtime: inboundRuntimeScopeSchema.nullable().optional(),
  /** The Letta `AgentState`, when known. */
  agent: jsonObjectSchema.nullable().optional(),
  /** The Letta `Conversation`, when known. */
  conversation: jsonObjectSchema.nullable().optional(),
  created: z.looseObject({ agent: z.boolean().optional(), conversation: z.boolean().optional() }).optional(),
  error: z.string().optional(),
});
export type RuntimeStartResponseFrame = z.infer<typeof runtimeStartResponseFrameSchema>;

/** R→C: the answer to `runtime_external_tools_update`. */
export const runtimeExternalToolsUpdateResponseFrameSchema = z.looseObject({
  type: z.literal("runtime_external_tools_update_response"),
  request_id: z.string(),
  success: z.boolean(),
  error: z.string().optional(),
});
export type RuntimeExternalToolsUpdateResponseFrame = z.infer<typeof runtimeExternalToolsUpdateResponseFrameSchema>;

/** R→C: the answer to a `sync` that carried a `request_id`. */
export const syncResponseFrameSchema = z.looseObject({
  type: z.literal("sync_response"),
  request_id: z.string(),
  runtime: inboundRuntimeScopeSchema.optional(),
  success: z.boolean(),
  error: z.string().optional(),
});
export type SyncResponseFrame = z.infer<typeof syncResponseFrameSchema>;

/** R→C: the answer to an `abort_message` that carried a `request_id`. */
export const abortMessageResponseFrameSchema = z.looseObject({
  type: z.literal("abort_message_response"),
  request_id: z.string(),
  runtime: inboundRuntimeScopeSchema.optional(),
  /** True when an active turn or pending approval was interrupted. */
  aborted: z.boolean(),
  success: z.boolean(),
  error: z.string().optional(),
});
export type AbortMessageResponseFrame = z.infer<typeof abortMessageResponseFrameSchema>;

/** `app_server_info_response.capabilities` (unknown capabilities are kept). */
export const appServerCapabilitiesSchema = z.looseObject({
  agent_management: z.boolean().optional(),
  conversation_management: z.boolean().optional(),
  memory_management: z.boolean().optional(),
  runtime_start: z.boolean().optional(),
  runtime_workspace_sandbox: z.boolean().optional(),
  /** Gate `runtime_external_tools_update` on this being `true`. */
  runtime_external_tools_update: z.boolean().optional(),
  split_channels: z.boolean().optional(),
});
export type AppServerCapabilities = z.infer<typeof appServerCapabilitiesSchema>;

/** R→C: the answer to `app_server_info` (also served at `GET /app-server-info`). */
export const appServerInfoResponseFrameSchema = z.looseObject({
  type: z.literal("app_server_info_response"),
  request_id: z.string(),
  success: z.boolean(),
  /** `"local"` or `"api"`. */
  backend: z.string().optional(),
  letta_code_version: z.string().optional(),
  protocol_version: z.number().optional(),
  capabilities: appServerCapabilitiesSchema.optional(),
  error: z.string().optional(),
});
export type AppServerInfoResponseFrame = z.infer<typeof appServerInfoResponseFrameSchema>;
