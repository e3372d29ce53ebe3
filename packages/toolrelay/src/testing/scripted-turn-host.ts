/**
 * What a scripted turn needs from the runtime around it. Implemented by the
 * runtime core; kept as an interface so the turn API stays small and testable.
 */
import type { Timers } from "../internal/timers.js";
import type { ScriptedCallTable } from "./scripted-call-table.js";
import type { ScriptedConnection } from "./scripted-connection.js";
import type { ActiveTurn, ApprovalAnswer, ScriptedConversation } from "./scripted-conversation.js";
import type { LoopStatus } from "./scripted-frames.js";
import { subagentStateFrame } from "./scripted-frames.js";
import type { ScriptedRuntimeState } from "./scripted-runtime-state.js";
import { externalFailure } from "./scripted-tool-result.js";
import type { ScriptedPermissionMode, ScriptedRuntimeScope, ScriptedToolResult, ScriptedVisibleTool } from "./scripted-runtime-types.js";

export interface TurnHost {
  /** Emit a runtime event (envelope added per socket) to the runtime's subscribers. */
  emit(message: Record<string, unknown>): void;
  /** Update the conversation's loop state and emit `update_loop_status`. */
  setLoop(status: LoopStatus, activeRunIds: readonly string[], executingToolCallIds?: readonly string[]): void;
  emitDeviceStatus(): void;
  /** Add or update one subagent of the runtime and emit `update_subagent_state` with all of them. */
  setSubagent(entry: Record<string, unknown>): void;
  /** A fresh `local-run-<n>`, correlated with the turn's client message ids. */
  nextRunId(clientMessageIds: readonly string[]): string;
  /** A fresh `<prefix>-<n>` message id (one counter per runtime, like the real one). */
  nextMessageId(prefix: "ui-msg" | "letta-msg"): string;
  /** The permission mode of the turn's runtime. */
  permissionMode(): ScriptedPermissionMode;
  /** Send `control_request` to the subscribers and wait for the `approval_response`. */
  requestApproval(frame: Record<string, unknown>): Promise<ApprovalAnswer>;
  /** Send an `external_tool_call_request` to the tool's registering connection and wait for its outcome. */
  callExternal(tool: ScriptedVisibleTool, toolCallId: string, input: Record<string, unknown>): Promise<ScriptedToolResult>;
  /** Write the last request of `toolCallId` in this conversation again, the same frame (see `redeliverToolCall`). */
  redeliverExternal(toolCallId: string): Promise<ScriptedToolResult> | undefined;
  /** The connection currently driving the turn (ownership passes on when it closes). */
  drivingConnectionId(): string;
  /** Resolves once every frame emitted so far was handed to the sockets. */
  flush(): Promise<void>;
  /** The runtime's clock, in milliseconds (the injected timers). */
  now(): number;
}

/**
 * What {@link createTurnHost} uses of the runtime core (`ScriptedRuntimeCore` has all of it). Named
 * here, not imported from the core, which imports this file: no import cycle, not even of types.
 */
export interface TurnHostRuntime {
  readonly closed: boolean;
  readonly state: Pick<ScriptedRuntimeState, "isStillRegistered">;
  readonly calls: Pick<ScriptedCallTable, "start" | "redeliver" | "records">;
  readonly connections: ReadonlyMap<string, ScriptedConnection>;
  readonly options: { readonly timers: Pick<Timers, "now"> };
  emit(scope: ScriptedRuntimeScope, message: Record<string, unknown>): void;
  deviceStatus(conversation: ScriptedConversation): Record<string, unknown>;
  setLoop(conversation: ScriptedConversation, status: LoopStatus, activeRunIds: readonly string[], executing?: readonly string[]): void;
  nextRunId(conversation: ScriptedConversation, clientMessageIds: readonly string[]): string;
  nextMessageId(prefix: string): string;
  flush(): Promise<void>;
}

/** The host of one turn: everything goes to the turn's conversation on `core`. */
export function createTurnHost(core: TurnHostRuntime, conversation: ScriptedConversation, active: ActiveTurn): TurnHost {
  const scope = conversation.scope;
  const deviceStatus = (): void => core.emit(scope, core.deviceStatus(conversation));
  return {
    emit: (message) => core.emit(scope, message),
    setLoop: (status, activeRunIds, executing) => core.setLoop(conversation, status, activeRunIds, executing),
    emitDeviceStatus: deviceStatus,
    setSubagent: (entry) => {
      conversation.subagents.set(String(entry.subagent_id), entry);
      core.emit(scope, subagentStateFrame([...conversation.subagents.values()]));
    },
    nextRunId: (clientMessageIds) => core.nextRunId(conversation, clientMessageIds),
    nextMessageId: (prefix) => core.nextMessageId(prefix),
    permissionMode: () => conversation.permissionMode,
    requestApproval: (frame) =>
      new Promise<ApprovalAnswer>((resolve) => {
        if (active.controller.signal.aborted) return resolve({ kind: "cancelled" });
        conversation.approvals.set(frame.request_id as string, { frame, resolve });
        core.emit(scope, frame);
        core.setLoop(conversation, "WAITING_ON_APPROVAL", conversation.activeRunIds);
        deviceStatus();
      }),
    callExternal: (tool, toolCallId, input) => {
      const connection = core.connections.get(tool.connectionId);
      // Like the real executor: the registration (and its connection) must still exist at call time.
      if (core.closed || !connection?.isOpen || !core.state.isStillRegistered(tool, scope)) {
        return Promise.resolve(externalFailure("External tool controller is not connected"));
      }
      const request = {
        connectionId: tool.connectionId,
        runtime: scope,
        ...(tool.scopeId !== undefined ? { scopeId: tool.scopeId } : {}),
        toolCallId,
        toolName: tool.name,
        input,
      };
      return core.calls.start(request, (frame) => connection.sendPlain(frame));
    },
    redeliverExternal: (toolCallId) => {
      const record = [...core.calls.records]
        .reverse()
        .find(
          (candidate) =>
            candidate.toolCallId === toolCallId &&
            candidate.runtime.agent_id === scope.agent_id &&
            candidate.runtime.conversation_id === scope.conversation_id,
        );
      const connection = record && core.connections.get(record.connectionId);
      if (!record || !connection?.isOpen) return undefined;
      return core.calls.redeliver(record.requestId, (frame) => connection.sendPlain(frame));
    },
    drivingConnectionId: () => active.connectionId,
    flush: () => core.flush(),
    now: () => core.options.timers.now(),
  };
}
