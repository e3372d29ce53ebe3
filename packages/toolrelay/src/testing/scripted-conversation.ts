/**
 * Per-runtime (agent + conversation) state of the scripted runtime: loop
 * status, the running turn, the input queue, remembered input dispositions and
 * pending approvals.
 */
import type { LoopSnapshot, LoopStatus, QueueItemSnapshot } from "./scripted-frames.js";
import type { ScriptedPermissionMode, ScriptedRuntimeScope } from "./scripted-runtime-types.js";

/** The client's answer to a `control_request`. */
export type ApprovalAnswer =
  | { kind: "allow"; updatedInput?: Record<string, unknown> | undefined }
  | { kind: "deny"; message: string }
  /** The turn was aborted, or its connection closed, while the request was pending. */
  | { kind: "cancelled" };

/** An accepted `create_message` input waiting for (or driving) a turn. */
export interface InputItem {
  connectionId: string;
  messages: readonly unknown[];
  payload: Readonly<Record<string, unknown>>;
  clientMessageIds: string[];
}

export interface QueuedInput extends InputItem, QueueItemSnapshot {}

export interface ActiveTurn {
  readonly controller: AbortController;
  /** The connection driving the turn; passes to another subscriber when it closes. */
  connectionId: string;
  /** The turn's `ScriptedTurnSession` once it runs: the core reads the run it is on (an abort names it). */
  session?: { readonly lastRunId: string | undefined } | undefined;
}

export interface PendingApproval {
  frame: Record<string, unknown>;
  resolve(answer: ApprovalAnswer): void;
}

export class ScriptedConversation {
  status: LoopStatus = "WAITING_ON_INPUT";
  activeRunIds: string[] = [];
  executingToolCallIds: string[] = [];
  readonly clientMessageIdsByRunId = new Map<string, string[]>();
  active: ActiveTurn | undefined;
  readonly queue: QueuedInput[] = [];
  /** When the last turn of this conversation finished (the runtime's clock), if one did. */
  lastTurnFinishedAt: number | undefined;
  /**
   * The running turn followed the previous one closely: every loop status reads idle (see
   * `staleLoopStatusWindowMs`), like the real runtime's.
   */
  reportsStaleStatus = false;
  /** Paused by an abort (like the real queue); the next accepted input resumes it. */
  paused = false;
  /** `request_id` (`perm-<tool_call_id>`) → pending `control_request`. */
  readonly approvals = new Map<string, PendingApproval>();
  /** `subagent_id` → its `update_subagent_state` entry. */
  readonly subagents = new Map<string, Record<string, unknown>>();

  readonly scope: ScriptedRuntimeScope;
  permissionMode: ScriptedPermissionMode;

  constructor(scope: ScriptedRuntimeScope, permissionMode: ScriptedPermissionMode) {
    this.scope = scope;
    this.permissionMode = permissionMode;
  }

  /** True while a turn runs and was not aborted. */
  get isRunning(): boolean {
    return this.active !== undefined && !this.active.controller.signal.aborted;
  }

  loopSnapshot(): LoopSnapshot {
    if (this.reportsStaleStatus) {
      return {
        status: "WAITING_ON_INPUT",
        activeRunIds: [],
        clientMessageIdsByRunId: this.clientMessageIdsByRunId,
        executingToolCallIds: [],
      };
    }
    return {
      status: this.status,
      activeRunIds: this.activeRunIds,
      clientMessageIdsByRunId: this.clientMessageIdsByRunId,
      executingToolCallIds: this.executingToolCallIds,
    };
  }

  pendingControlRequests(): Record<string, unknown>[] {
    return [...this.approvals.values()].map((approval) => approval.frame);
  }

  /** Resolve every pending approval as cancelled ("Cancelled by user" in the real runtime). */
  cancelApprovals(): void {
    const pending = [...this.approvals.values()];
    this.approvals.clear();
    for (const approval of pending) approval.resolve({ kind: "cancelled" });
  }

  /** Abort the running turn's signal and its pending approvals. */
  cancelTurn(): void {
    this.active?.controller.abort(new Error("Interrupted by user"));
    this.cancelApprovals();
  }
}
