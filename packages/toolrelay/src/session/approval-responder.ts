import { inputDigest } from "../calls/index.js";
import { canonicalJson } from "../internal/canonical-json.js";
import type { ControlRequestFrame, InputFrame } from "../wire/index.js";
import type { OwnRuntime } from "./own-runtime.js";

/** A permission request from the runtime (`control_request` / `can_use_tool`). */
export interface ApprovalRequest {
  toolName: string;
  input: Record<string, unknown>;
  toolCallId: string | undefined;
  requestId: string;
  agentId: string;
  conversationId: string;
  /** The runtime's suggested permission rules, if any. */
  suggestions: ReadonlyArray<{ id: string; text: string }>;
}

/** The answer to an {@link ApprovalRequest}. */
export type ApprovalDecision =
  | { behavior: "allow" /** Replace the tool's input. */; updatedInput?: Record<string, unknown> | undefined }
  | { behavior: "deny" /** Read by the model. */; message: string };

export interface ApprovalResponderOptions {
  /** The session's own client tool names: always allowed. */
  isClientTool(name: string): boolean;
  canUseTool?: ((request: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>) | undefined;
  /** Which runtime is this session's: requests of any other are left alone. */
  own: OwnRuntime;
  /** A request of another runtime was left alone. */
  onForeign(frame: ControlRequestFrame, scope: { agent_id: string; conversation_id: string }): void;
  send(frame: InputFrame): boolean;
  /** Report a failing `canUseTool` callback. */
  onCallbackError(error: unknown, request: ApprovalRequest): void;
  /** Decisions remembered for replays. Default 256. */
  maxRemembered?: number | undefined;
}

/**
 * Answers `can_use_tool` for the session's own runtime only — the runtime
 * replays every pending approval of every conversation to each new connection,
 * and another person's approval is theirs to answer. Allow for the session's
 * client tools, the caller's `canUseTool` for anything else, deny with an
 * explanation when there is no callback. The runtime also replays pending
 * approvals on every `sync`, so decisions are remembered by (agent,
 * conversation, request id, tool and input digest) and a replay gets the same
 * answer without asking again; a reused tool call id with another input is a
 * new question.
 */
export class ApprovalResponder {
  #options: ApprovalResponderOptions;
  #decisions = new Map<string, Promise<ApprovalDecision>>();

  constructor(options: ApprovalResponderOptions) {
    this.#options = options;
  }

  handle(frame: ControlRequestFrame): void {
    const request = frame.request;
    if (request.subtype !== "can_use_tool") return;
    const verdict = this.#options.own.classify(frame.runtime ?? scopeFromFields(frame));
    if (verdict.kind === "foreign") {
      this.#options.onForeign(frame, verdict.scope);
      return;
    }
    if (verdict.kind === "unscoped") return;
    const runtime = verdict.scope;
    const approval: ApprovalRequest = {
      toolName: request.tool_name,
      input: (request.input ?? {}) as Record<string, unknown>,
      toolCallId: request.tool_call_id,
      requestId: frame.request_id,
      agentId: runtime.agent_id,
      conversationId: runtime.conversation_id,
      suggestions: request.permission_suggestions ?? [],
    };
    const digest = inputDigest(canonicalJson([request.tool_name, request.input ?? {}]));
    const memoryKey = JSON.stringify([runtime.agent_id, runtime.conversation_id, frame.request_id, digest]);
    let decision = this.#decisions.get(memoryKey);
    if (decision === undefined) {
      decision = this.#decide(approval);
      this.#remember(memoryKey, decision);
    }
    void decision.then((answer) => {
      this.#options.send({
        type: "input",
        runtime: { agent_id: runtime.agent_id, conversation_id: runtime.conversation_id },
        payload: { kind: "approval_response", request_id: frame.request_id, decision: toWireDecision(answer) },
      } as InputFrame);
    });
  }

  async #decide(request: ApprovalRequest): Promise<ApprovalDecision> {
    if (this.#options.isClientTool(request.toolName)) return { behavior: "allow" };
    const callback = this.#options.canUseTool;
    if (callback === undefined) {
      return {
        behavior: "deny",
        message: `Permission for ${request.toolName} was denied: this toolrelay session has no canUseTool callback for runtime tools.`,
      };
    }
    try {
      return await callback(request);
    } catch (error) {
      this.#options.onCallbackError(error, request);
      return { behavior: "deny", message: `Permission for ${request.toolName} was denied: the approval callback failed.` };
    }
  }

  #remember(key: string, decision: Promise<ApprovalDecision>): void {
    this.#decisions.set(key, decision);
    const limit = this.#options.maxRemembered ?? 256;
    while (this.#decisions.size > limit) {
      const oldest = this.#decisions.keys().next().value as string;
      this.#decisions.delete(oldest);
    }
  }
}

function scopeFromFields(frame: ControlRequestFrame): { agent_id: string; conversation_id: string } | undefined {
  const fields = frame as { agent_id?: unknown; conversation_id?: unknown };
  if (typeof fields.agent_id !== "string") return undefined;
  return { agent_id: fields.agent_id, conversation_id: typeof fields.conversation_id === "string" ? fields.conversation_id : "default" };
}

function toWireDecision(decision: ApprovalDecision) {
  if (decision.behavior === "allow") {
    return decision.updatedInput ? { behavior: "allow" as const, updated_input: decision.updatedInput } : { behavior: "allow" as const };
  }
  return { behavior: "deny" as const, message: decision.message };
}
