/**
 * Frame builders of the scripted runtime, shaped after frames recorded from
 * the real app-server (Letta Code 0.32.18, local backend). Runtime events are
 * returned without their envelope: `ScriptedConnection.sendEvent` adds
 * `runtime`, `event_seq`, `emitted_at` and `idempotency_key` per target socket.
 */
import { randomUUID } from "node:crypto";
import type { ScriptedPermissionMode, ScriptedRuntimeScope } from "./scripted-runtime-types.js";

type Frame = Record<string, unknown>;

const now = (): string => new Date().toISOString();

/** The `status` values of `update_loop_status.loop_status`. */
export type LoopStatus =
  | "SENDING_API_REQUEST"
  | "WAITING_FOR_API_RESPONSE"
  | "PROCESSING_API_RESPONSE"
  | "EXECUTING_CLIENT_SIDE_TOOL"
  | "WAITING_ON_APPROVAL"
  | "WAITING_ON_INPUT";

export interface LoopSnapshot {
  status: LoopStatus;
  activeRunIds: readonly string[];
  clientMessageIdsByRunId: ReadonlyMap<string, readonly string[]>;
  executingToolCallIds: readonly string[];
}

export function loopStatusFrame(snapshot: LoopSnapshot): Frame {
  return {
    type: "update_loop_status",
    loop_status: {
      status: snapshot.status,
      active_run_ids: [...snapshot.activeRunIds],
      ...(snapshot.clientMessageIdsByRunId.size > 0
        ? { client_message_ids_by_run_id: Object.fromEntries([...snapshot.clientMessageIdsByRunId].map(([run, ids]) => [run, [...ids]])) }
        : {}),
      executing_tool_call_ids: snapshot.status === "EXECUTING_CLIENT_SIDE_TOOL" ? [...snapshot.executingToolCallIds] : [],
    },
  };
}

export interface QueueItemSnapshot {
  id: string;
  clientMessageId: string;
  content: unknown;
  enqueuedAt: string;
}

export function queueFrame(items: readonly QueueItemSnapshot[], removed: readonly string[] = []): Frame {
  return {
    type: "update_queue",
    queue: items.map((item) => ({
      id: item.id,
      client_message_id: item.clientMessageId,
      kind: "message",
      source: "user",
      content: item.content,
      enqueued_at: item.enqueuedAt,
    })),
    removed: removed.map((clientMessageId) => ({ client_message_id: clientMessageId, disposition: "dequeued" })),
  };
}

export function subagentStateFrame(subagents: readonly Frame[] = []): Frame {
  return { type: "update_subagent_state", subagents: [...subagents] };
}

/** A reduced `update_device_status` (the real one also lists toolsets, skills, experiments, ...). */
export function deviceStatusFrame(options: {
  isProcessing: boolean;
  permissionMode: ScriptedPermissionMode;
  pendingControlRequests: readonly Frame[];
}): Frame {
  return {
    type: "update_device_status",
    device_status: {
      current_connection_id: "app-server",
      connection_name: "scripted-runtime",
      is_online: true,
      is_processing: options.isProcessing,
      current_permission_mode: options.permissionMode,
      current_working_directory: process.cwd(),
      git_context: null,
      letta_code_version: null,
      current_toolset: null,
      current_toolset_preference: "auto",
      available_toolsets: [],
      current_loaded_tools: [],
      current_available_skills: [],
      background_processes: [],
      pending_control_requests: options.pendingControlRequests.map((request) => ({
        request_id: request.request_id,
        request: request.request,
      })),
      experiments: [],
      memory_directory: null,
      cwd_revision: 0,
      should_doctor: false,
      supported_commands: [],
      reflection_settings: null,
    },
  };
}

export function streamDelta(delta: Frame): Frame {
  return { type: "stream_delta", delta };
}

/** A runtime lifecycle delta (`client_tool_start`, `status`, `loop_error`, ...): no `type: "message"`. */
export function lifecycleDelta(messageType: string, runId: string | undefined, fields: Frame, id?: string): Frame {
  return {
    id: id ?? `lifecycle-${randomUUID()}`,
    date: now(),
    message_type: messageType,
    ...(runId ? { run_id: runId } : {}),
    ...fields,
  };
}

/** A Letta message delta from the model stream (`assistant_message`, `approval_request_message`, ...). */
export function messageDelta(
  messageType: string,
  id: string,
  scope: ScriptedRuntimeScope,
  runId: string,
  seqId: number,
  fields: Frame,
): Frame {
  return {
    id,
    date: now(),
    agent_id: scope.agent_id,
    conversation_id: scope.conversation_id,
    message_type: messageType,
    ...fields,
    run_id: runId,
    seq_id: seqId,
    type: "message",
  };
}

export function stopReasonDelta(stopReason: string, runId: string, seqId: number): Frame {
  return { message_type: "stop_reason", stop_reason: stopReason, run_id: runId, seq_id: seqId, type: "message" };
}

/** The counters of a `usage_statistics` delta (all zero: the scripted model costs nothing). */
export const ZERO_USAGE: Readonly<Frame> = {
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  cached_input_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
  context_tokens: 0,
};

export function usageDelta(id: string, scope: ScriptedRuntimeScope, runId: string, seqId: number): Frame {
  return messageDelta("usage_statistics", id, scope, runId, seqId, { ...ZERO_USAGE });
}

export function toolReturnDelta(runId: string, toolCallId: string, status: "success" | "error", toolReturn: string): Frame {
  return {
    type: "message",
    message_type: "tool_return_message",
    id: `synthetic-tool-return-${randomUUID()}`,
    date: now(),
    run_id: runId,
    status,
    tool_call_id: toolCallId,
    tool_return: toolReturn,
    tool_returns: [{ tool_call_id: toolCallId, status, tool_return: toolReturn }],
  };
}

export function controlRequestFrame(scope: ScriptedRuntimeScope, toolCallId: string, toolName: string, input: Frame): Frame {
  return {
    type: "control_request",
    request_id: `perm-${toolCallId}`,
    request: {
      subtype: "can_use_tool",
      tool_name: toolName,
      input,
      tool_call_id: toolCallId,
      permission_suggestions: [{ id: "save-default", text: `Yes, allow ${toolName} operations during this session` }],
      blocked_path: null,
    },
    agent_id: scope.agent_id,
    conversation_id: scope.conversation_id,
  };
}

export function turnFinishedFrame(turnId: string, stopReason: string, runId: string | undefined, error?: string): Frame {
  return {
    type: "turn_finished",
    turn_id: turnId,
    stop_reason: stopReason,
    ...(runId ? { run_id: runId } : {}),
    ...(error ? { error } : {}),
  };
}

export function appServerInfoResponse(requestId: string, version: string): Frame {
  return {
    type: "app_server_info_response",
    request_id: requestId,
    success: true,
    backend: "local",
    letta_code_version: version,
    protocol_version: 1,
    capabilities: {
      agent_management: true,
      conversation_management: true,
      memory_management: true,
      runtime_start: true,
      launch_subagent: true,
      runtime_workspace_sandbox: true,
      runtime_external_tools_update: true,
      structured_outputs: false,
      split_channels: false,
    },
  };
}

/** The `agent` of `runtime_start_response` (a reduced AgentState). */
export function agentState(agentId: string, body: Frame | undefined): Frame {
  return {
    id: agentId,
    name: typeof body?.name === "string" ? body.name : agentId,
    description: typeof body?.description === "string" ? body.description : null,
    system: typeof body?.system === "string" ? body.system : "",
    tools: [],
    tags: [],
    model: typeof body?.model === "string" ? body.model : "scripted/model",
    model_settings: {},
    message_ids: [],
    in_context_message_ids: [],
    last_run_completion: now(),
    llm_config: {
      model: typeof body?.model === "string" ? body.model.replace(/^[^/]*\//, "") : "model",
      model_endpoint_type: "scripted",
      model_endpoint: "http://127.0.0.1/scripted",
      context_window: 128000,
    },
  };
}

/** The `conversation` of `runtime_start_response`. */
export function conversationState(conversationId: string, agentId: string): Frame {
  const date = now();
  return {
    id: conversationId,
    agent_id: agentId,
    archived: false,
    archived_at: null,
    created_at: date,
    updated_at: date,
    last_message_at: null,
    summary: null,
    in_context_message_ids: [],
  };
}
