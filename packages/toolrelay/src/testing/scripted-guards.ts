/**
 * Inbound frame checks of the scripted runtime. They mirror the type guards of
 * the real app-server (Letta Code 0.32.18, `protocol-inbound`): a frame that
 * fails them is dropped without any reply, exactly like the real one does.
 */
import { PERMISSION_MODES } from "../internal/permission-modes.js";

type Json = Record<string, unknown>;

export function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isString = (value: unknown): value is string => typeof value === "string";
const isNonEmptyString = (value: unknown): value is string => typeof value === "string" && value.length > 0;
const isOptional = (value: unknown, check: (value: unknown) => boolean): boolean => value === undefined || check(value);
const isBoolean = (value: unknown): value is boolean => typeof value === "boolean";
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);

/** `runtime` of input / sync / abort_message: both ids non-empty (agent-free runtimes are not supported here). */
export function isRuntimeScope(value: unknown): value is { agent_id: string; conversation_id: string } {
  return isRecord(value) && isNonEmptyString(value.agent_id) && isNonEmptyString(value.conversation_id);
}

function isToolDefinition(value: unknown): boolean {
  return (
    isRecord(value) &&
    isString(value.name) &&
    isOptional(value.label, isString) &&
    isString(value.description) &&
    isRecord(value.parameters)
  );
}

export function isToolsGroup(value: unknown): boolean {
  return isRecord(value) && isOptional(value.scope_id, isString) && Array.isArray(value.tools) && value.tools.every(isToolDefinition);
}

export function isRuntimeStartCommand(frame: Json): boolean {
  const createAgent = frame.create_agent;
  const createConversation = frame.create_conversation;
  return (
    isString(frame.request_id) &&
    isOptional(frame.agent_id, isString) &&
    (createAgent === undefined || (isRecord(createAgent) && isRecord(createAgent.body))) &&
    isOptional(frame.conversation_id, isString) &&
    (createConversation === undefined || (isRecord(createConversation) && isOptional(createConversation.body, isRecord))) &&
    isOptional(frame.conversation_source_tags, isStringArray) &&
    (frame.cwd === undefined || frame.cwd === null || isString(frame.cwd)) &&
    (frame.mode === undefined || (PERMISSION_MODES as readonly unknown[]).includes(frame.mode)) &&
    isOptional(frame.client_info, (info) => isRecord(info) && isString(info.name)) &&
    isOptional(frame.recover_approvals, isBoolean) &&
    isOptional(frame.force_device_status, isBoolean) &&
    isOptional(frame.wait_for_replay, isBoolean) &&
    isOptional(frame.external_tools, (groups) => Array.isArray(groups) && groups.every(isToolsGroup))
  );
}

export function isToolsUpdateCommand(frame: Json): boolean {
  if (!isString(frame.request_id) || !Array.isArray(frame.updates)) return false;
  const seen = new Set<string>();
  for (const update of frame.updates) {
    if (!isRecord(update) || !Array.isArray(update.runtimes) || update.runtimes.length === 0) return false;
    if (!update.runtimes.every(isRuntimeScope)) return false;
    if (!Array.isArray(update.external_tools) || !update.external_tools.every(isToolsGroup)) return false;
    for (const runtime of update.runtimes as Array<{ agent_id: string; conversation_id: string }>) {
      const key = `${runtime.agent_id}:${runtime.conversation_id}`;
      if (seen.has(key)) return false;
      seen.add(key);
    }
  }
  return true;
}

export function isToolResponseCommand(frame: Json): boolean {
  if (!isString(frame.request_id) || !isOptional(frame.error, isString)) return false;
  if (frame.result === undefined) return isString(frame.error);
  const result = frame.result;
  return isRecord(result) && Array.isArray(result.content) && result.content.every(isRecord) && isOptional(result.is_error, isBoolean);
}

function isApprovalResponse(payload: Json): boolean {
  if (!isString(payload.request_id)) return false;
  if (payload.error !== undefined) return isString(payload.error);
  const decision = payload.decision;
  if (!isRecord(decision)) return false;
  if (decision.behavior === "allow") {
    return (
      isOptional(decision.message, isString) &&
      (decision.updated_input === undefined || decision.updated_input === null || typeof decision.updated_input === "object") &&
      isOptional(decision.selected_permission_suggestion_ids, isStringArray)
    );
  }
  return decision.behavior === "deny" && isString(decision.message);
}

function isCreateMessage(payload: Json): boolean {
  return (
    Array.isArray(payload.messages) &&
    isOptional(payload.image_failure_mode, (mode) => mode === "strict" || mode === "drop") &&
    isOptional(payload.client_tool_allowlist, isStringArray) &&
    isOptional(payload.client_toolset, isRecord) &&
    isOptional(payload.external_tool_scope_ids, isStringArray) &&
    isOptional(payload.exclude_interactive_tools, isBoolean)
  );
}

/**
 * Classify an `input` frame: `"valid"`, `"drop"` (no runtime: silent), or a
 * protocol-violation text (valid runtime, bad payload: the real runtime emits a
 * non-terminal `loop_error` with it).
 */
export function checkInputCommand(frame: Json): "valid" | "drop" | { violation: string } {
  if (!isRuntimeScope(frame.runtime)) return "drop";
  if (frame.request_id !== undefined && !isNonEmptyString(frame.request_id)) return "drop";
  const payload = frame.payload;
  if (!isRecord(payload)) return { violation: "Protocol violation: input.payload must be an object" };
  if (payload.kind === "create_message") {
    if (isCreateMessage(payload)) return "valid";
    if (!Array.isArray(payload.messages)) {
      return { violation: "Protocol violation: input.kind=create_message requires payload.messages[]" };
    }
    return { violation: "Protocol violation: input.payload has an invalid create_message option" };
  }
  if (payload.kind === "approval_response") {
    if (isApprovalResponse(payload)) return "valid";
    return {
      violation:
        "Protocol violation: input.kind=approval_response requires payload.request_id and either payload.decision or payload.error",
    };
  }
  return { violation: `Unsupported input payload kind: ${String(payload.kind)}` };
}

export function isAbortCommand(frame: Json): boolean {
  return (
    isRuntimeScope(frame.runtime) &&
    isOptional(frame.request_id, isString) &&
    (frame.run_id === undefined || frame.run_id === null || isString(frame.run_id))
  );
}

export function isSyncCommand(frame: Json): boolean {
  return (
    isRuntimeScope(frame.runtime) &&
    isOptional(frame.request_id, isString) &&
    isOptional(frame.recover_approvals, isBoolean) &&
    isOptional(frame.force_device_status, isBoolean)
  );
}

export function isAppServerInfoCommand(frame: Json): boolean {
  return isNonEmptyString(frame.request_id);
}
