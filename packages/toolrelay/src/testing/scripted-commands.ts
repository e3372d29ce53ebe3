/**
 * Inbound frame handling of the scripted runtime, one function per command,
 * mirroring the real message router: a frame that fails validation (or has an
 * unknown type) is dropped without any reply; a connection subscribes to a
 * runtime with `runtime_start` or any valid frame carrying a top-level
 * `runtime`; responses carry no envelope.
 */
import { randomUUID } from "node:crypto";
import { parseJson } from "../internal/safe-json.js";
import type { ScriptedConnection } from "./scripted-connection.js";
import { agentState, appServerInfoResponse, conversationState, lifecycleDelta, streamDelta } from "./scripted-frames.js";
import {
  checkInputCommand,
  isAbortCommand,
  isAppServerInfoCommand,
  isRecord,
  isRuntimeStartCommand,
  isSyncCommand,
  isToolResponseCommand,
  isToolsUpdateCommand,
} from "./scripted-guards.js";
import type { PendingApproval } from "./scripted-conversation.js";
import type { ScriptedRuntimeCore } from "./scripted-runtime-core.js";
import type { ScriptedPermissionMode, ScriptedRuntimeScope } from "./scripted-runtime-types.js";

type Frame = Record<string, unknown>;

/** Handle one text frame from `connection`. Never throws. */
export function handleFrame(core: ScriptedRuntimeCore, connection: ScriptedConnection, text: string): void {
  const parsed = parseJson(text);
  const frame = parsed.ok && isRecord(parsed.value) ? parsed.value : undefined;
  core.frames.push({
    connectionId: connection.id,
    type: typeof frame?.type === "string" ? frame.type : undefined,
    frame: parsed.ok ? parsed.value : undefined,
    text,
  });
  if (!frame || core.closed) return;
  switch (frame.type) {
    case "app_server_info":
      if (isAppServerInfoCommand(frame)) connection.sendPlain(appServerInfoResponse(frame.request_id as string, core.options.version));
      return;
    case "runtime_start":
      if (isRuntimeStartCommand(frame)) runtimeStart(core, connection, frame);
      return;
    case "runtime_external_tools_update":
      if (!isToolsUpdateCommand(frame)) return;
      for (const update of frame.updates as Array<{ runtimes: ScriptedRuntimeScope[]; external_tools: unknown[] }>) {
        for (const runtime of update.runtimes) core.state.replaceTools(connection.id, runtime, update.external_tools);
      }
      connection.sendPlain({ type: "runtime_external_tools_update_response", request_id: frame.request_id, success: true });
      return;
    case "external_tool_call_response":
      if (isToolResponseCommand(frame)) core.calls.answer(connection.id, frame);
      return;
    case "sync":
      if (isSyncCommand(frame)) sync(core, connection, frame);
      return;
    case "abort_message":
      if (!isAbortCommand(frame)) return;
      abortMessage(core, connection, frame);
      return;
    case "input":
      input(core, connection, frame);
      return;
    default:
      return;
  }
}

function scopeOf(frame: Frame): ScriptedRuntimeScope {
  const runtime = frame.runtime as ScriptedRuntimeScope;
  return { agent_id: runtime.agent_id, conversation_id: runtime.conversation_id };
}

function runtimeStart(core: ScriptedRuntimeCore, connection: ScriptedConnection, frame: Frame): void {
  const created = { agent: false, conversation: false };
  const respond = (body: Frame): void => {
    connection.sendPlain({ type: "runtime_start_response", request_id: frame.request_id, ...body });
  };
  const fail = (error: string, agent: Frame | null = null): void =>
    respond({ success: false, runtime: null, agent, conversation: null, created, error });
  const agentId = frame.agent_id as string | undefined;
  const conversationId = frame.conversation_id as string | undefined;
  const refusal = runtimeStartRefusal(frame, agentId, conversationId);
  if (refusal !== undefined) {
    fail(refusal);
    return;
  }
  let resolvedAgentId = agentId;
  let agent: Frame | null = null;
  if (frame.create_agent !== undefined) {
    const body = (frame.create_agent as { body: Frame }).body;
    resolvedAgentId = `agent-${randomUUID()}`;
    core.state.rememberAgent(resolvedAgentId, typeof body.name === "string" ? body.name : resolvedAgentId);
    agent = agentState(resolvedAgentId, body);
    created.agent = true;
  } else if (resolvedAgentId !== undefined) {
    agent = agentState(resolvedAgentId, { name: core.state.agentName(resolvedAgentId) });
  }
  if (resolvedAgentId === undefined) {
    fail(agentFreeRefusal(core, conversationId));
    return;
  }
  let resolvedConversationId: string;
  if (conversationId !== undefined) {
    const owner = core.state.conversationAgent(conversationId);
    if (owner !== undefined && owner !== resolvedAgentId) {
      fail(`Conversation ${conversationId} belongs to ${owner}, not ${resolvedAgentId}`, agent);
      return;
    }
    resolvedConversationId = conversationId;
    if (conversationId !== "default") core.state.rememberConversation(conversationId, resolvedAgentId);
  } else {
    resolvedConversationId = `conv-${randomUUID()}`;
    core.state.rememberConversation(resolvedConversationId, resolvedAgentId);
    created.conversation = true;
  }
  const scope = { agent_id: resolvedAgentId, conversation_id: resolvedConversationId };
  const conversation = core.conversation(scope);
  if (typeof frame.mode === "string") conversation.permissionMode = frame.mode as ScriptedPermissionMode;
  core.state.subscribe(connection.id, scope);
  core.state.replaceTools(connection.id, scope, (frame.external_tools as unknown[] | undefined) ?? []);
  const forceDeviceStatus = frame.force_device_status !== false;
  if (frame.wait_for_replay === true) core.replayState(connection, conversation, forceDeviceStatus);
  respond({ success: true, runtime: scope, agent, conversation: conversationState(resolvedConversationId, resolvedAgentId), created });
  if (frame.wait_for_replay !== true) core.replayState(connection, conversation, forceDeviceStatus);
}

/** Why the real runtime refuses the shape of a `runtime_start`, if it does. */
function runtimeStartRefusal(frame: Frame, agentId: string | undefined, conversationId: string | undefined): string | undefined {
  if (agentId === "") return "runtime_start agent_id must be a non-empty string";
  if (conversationId === "") return "runtime_start conversation_id must be a non-empty string";
  if (agentId !== undefined && frame.create_agent !== undefined) return "runtime_start agent_id cannot be combined with create_agent";
  if (
    agentId === undefined &&
    frame.create_agent === undefined &&
    conversationId === undefined &&
    frame.create_conversation === undefined
  ) {
    return "runtime_start requires an agent or conversation";
  }
  if (conversationId !== undefined && frame.create_conversation !== undefined) {
    return "runtime_start conversation_id cannot be combined with create_conversation";
  }
  return undefined;
}

/** The refusal of a runtime without an agent (the scripted runtime has none). */
function agentFreeRefusal(core: ScriptedRuntimeCore, conversationId: string | undefined): string {
  if (conversationId === "default") return "Agent-free runtimes require a persisted conversation";
  const owner = conversationId === undefined ? undefined : core.state.conversationAgent(conversationId);
  if (owner) return `Conversation ${conversationId} is agent-backed; provide agent_id`;
  return "The scripted runtime does not support agent-free runtimes";
}

function sync(core: ScriptedRuntimeCore, connection: ScriptedConnection, frame: Frame): void {
  const scope = scopeOf(frame);
  core.state.subscribe(connection.id, scope);
  core.replayState(connection, core.conversation(scope), true);
  if (typeof frame.request_id === "string") {
    connection.sendPlain({ type: "sync_response", request_id: frame.request_id, runtime: frame.runtime, success: true });
  }
}

function abortMessage(core: ScriptedRuntimeCore, connection: ScriptedConnection, frame: Frame): void {
  const scope = scopeOf(frame);
  core.state.subscribe(connection.id, scope);
  const aborted = core.abort(core.conversation(scope), typeof frame.run_id === "string" ? frame.run_id : undefined);
  if (typeof frame.request_id === "string") {
    connection.sendPlain({ type: "abort_message_response", request_id: frame.request_id, runtime: frame.runtime, aborted, success: true });
  }
}

function input(core: ScriptedRuntimeCore, connection: ScriptedConnection, frame: Frame): void {
  const check = checkInputCommand(frame);
  if (check === "drop") return;
  const scope = scopeOf(frame);
  core.state.subscribe(connection.id, scope);
  const loopError = (message: string): void =>
    core.emit(scope, streamDelta(lifecycleDelta("loop_error", undefined, { message, stop_reason: "error", is_terminal: false })));
  if (check !== "valid") {
    loopError(check.violation);
    return;
  }
  const acknowledge = (accepted: boolean, error?: string, disposition?: "started" | "queued"): void => {
    if (typeof frame.request_id !== "string") return;
    connection.sendPlain({
      type: "input_accepted",
      request_id: frame.request_id,
      runtime: frame.runtime,
      accepted,
      ...(disposition ? { disposition } : {}),
      ...(error ? { error } : {}),
    });
  };
  const conversation = core.conversation(scope);
  const payload = frame.payload as Frame;
  if (payload.kind === "approval_response") {
    const handled = answerApproval(conversation.approvals, payload);
    acknowledge(handled, handled ? undefined : "Approval request is no longer pending");
    return;
  }
  const messages = payload.messages as unknown[];
  if (messages.some((message) => isRecord(message) && message.type === "approval")) {
    loopError("Protocol violation: approval payloads are not allowed in input.kind=create_message. Use input.kind=approval_response.");
    acknowledge(false, "Approval payloads require approval_response");
    return;
  }
  const firstUser = messages.find((message): message is Frame => isRecord(message) && "content" in message);
  const clientMessageIds = messages
    .map((message) => (isRecord(message) && typeof message.client_message_id === "string" ? message.client_message_id : undefined))
    .filter((id): id is string => id !== undefined);
  // Like the real runtime, a repeated input (same request_id, same client_message_id) is not
  // deduplicated: it is accepted again and starts (or queues) another run.
  if ((conversation.active || conversation.queue.length > 0) && !firstUser) {
    acknowledge(false, "Input was rejected by the queue");
    return;
  }
  core.acceptInput(conversation, { connectionId: connection.id, messages, payload, clientMessageIds }, firstUser?.content, (disposition) =>
    acknowledge(true, undefined, disposition),
  );
}

function answerApproval(approvals: Map<string, PendingApproval>, payload: Frame): boolean {
  const requestId = payload.request_id as string;
  const pending = approvals.get(requestId);
  if (!pending) return false;
  approvals.delete(requestId);
  if (typeof payload.error === "string") {
    pending.resolve({ kind: "deny", message: payload.error });
    return true;
  }
  const decision = payload.decision as Frame;
  if (decision.behavior === "allow") {
    const updated = decision.updated_input;
    pending.resolve(isRecord(updated) ? { kind: "allow", updatedInput: updated } : { kind: "allow" });
  } else {
    pending.resolve({ kind: "deny", message: decision.message as string });
  }
  return true;
}
