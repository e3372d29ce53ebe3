import { inputDigest, type ApprovalAsk, type ApprovalVerdict } from "../calls/index.js";
import { canonicalJson } from "../internal/canonical-json.js";
import { nextRequestId } from "../internal/request-id.js";
import type { TimerHandle, Timers } from "../internal/timers.js";
import type { ToolAnnotations } from "../tools/index.js";
import type { ControlRequestFrame, InputFrame } from "../wire/index.js";
import type { OwnRuntime } from "./own-runtime.js";

/**
 * A question for the app: may this tool call run? `kind` says whose tool it is:
 * - `"runtime-tool"`: one of the runtime's own tools (Bash, Write, Edit, ...) that its permission
 *   mode does not let run at once (the runtime's `can_use_tool`);
 * - `"client-tool"`: a call of one of the session's client tools whose `needsApproval` says so.
 */
export interface ApprovalRequest {
  kind: "runtime-tool" | "client-tool";
  toolName: string;
  /** The call's input (for a client tool, validated: what `execute` would get). */
  input: Record<string, unknown>;
  toolCallId: string | undefined;
  /** The runtime's request id (`perm-<tool_call_id>`, or the client tool call's `external-tool-<uuid>`). */
  requestId: string;
  agentId: string;
  conversationId: string;
  /** The runtime's suggested permission rules, if any (`[]` for a client tool). */
  suggestions: ReadonlyArray<{ id: string; text: string }>;
  /** A client tool's annotations (`title`, `destructiveHint`, ...); `{}` for a runtime tool. */
  annotations: Readonly<ToolAnnotations>;
  /** A client tool call's idempotency key (`ToolCallContext.idempotencyKey`); `undefined` for a runtime tool. */
  idempotencyKey: string | undefined;
  /** Fires when the question is moot (the approval timed out, the call was cancelled, the session closed): close the prompt. */
  signal: AbortSignal;
}

/**
 * The answer to an {@link ApprovalRequest}: `allow` (optionally with a replaced input, which a
 * client tool validates again), or `deny` with a `message` the model reads.
 */
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
  /**
   * Send an answer that names its own `request_id` and resolve with the runtime's `input_accepted`
   * (rejects when none comes). Used for an approval's first answer, to learn that the runtime lost it.
   */
  request?: ((frame: InputFrame & { request_id: string }) => Promise<{ accepted: boolean; error?: string | undefined }>) | undefined;
  /**
   * The runtime answered an approval's FIRST answer "no longer pending": it lost the request (a
   * turn that follows the previous one within its cleanup window) and the turn cannot go on.
   */
  onLost?: ((request: ApprovalRequest) => void) | undefined;
  /** Report a failing `canUseTool` callback. */
  onCallbackError(error: unknown, request: ApprovalRequest): void;
  /** Decisions remembered for replays. Default 256. */
  maxRemembered?: number | undefined;
  /** A runtime tool's approval unanswered this long is denied (ms). The session's `approvalTimeoutMs`. */
  timeoutMs: number;
  timers: Timers;
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
      kind: "runtime-tool",
      toolName: request.tool_name,
      input: (request.input ?? {}) as Record<string, unknown>,
      toolCallId: request.tool_call_id,
      requestId: frame.request_id,
      agentId: runtime.agent_id,
      conversationId: runtime.conversation_id,
      suggestions: request.permission_suggestions ?? [],
      annotations: NO_ANNOTATIONS,
      idempotencyKey: undefined,
      signal: NEVER_ABORTED,
    };
    const digest = inputDigest(canonicalJson([request.tool_name, request.input ?? {}]));
    const memoryKey = JSON.stringify([runtime.agent_id, runtime.conversation_id, frame.request_id, digest]);
    let decision = this.#decisions.get(memoryKey);
    const first = decision === undefined;
    if (decision === undefined) {
      decision = this.#decide(approval);
      this.#remember(memoryKey, decision);
    }
    void decision.then((answer) => {
      const input = {
        type: "input",
        runtime: { agent_id: runtime.agent_id, conversation_id: runtime.conversation_id },
        payload: { kind: "approval_response", request_id: frame.request_id, decision: toWireDecision(answer) },
      } as InputFrame;
      const { request, onLost } = this.#options;
      // A replay's answer may find the request already answered ("no longer pending"): only the first answer tells.
      if (!first || request === undefined || onLost === undefined) return void this.#options.send(input);
      request({ ...input, request_id: nextRequestId("approval") }).then(
        (accepted) => {
          if (!accepted.accepted && /no longer pending/i.test(accepted.error ?? "")) onLost(approval);
        },
        () => undefined,
      );
    });
  }

  /** A runtime tool: allowed when it is one of the session's client tools (their approval is their own), else the callback's answer. */
  async #decide(request: ApprovalRequest): Promise<ApprovalDecision> {
    if (this.#options.isClientTool(request.toolName)) return { behavior: "allow" };
    const callback = this.#options.canUseTool;
    if (callback === undefined) {
      return {
        behavior: "deny",
        message: `Permission for ${request.toolName} was denied: this toolrelay session has no canUseTool callback for runtime tools.`,
      };
    }
    const controller = new AbortController();
    let timer: TimerHandle | undefined;
    const timedOut = new Promise<ApprovalDecision>((resolve) => {
      timer = this.#options.timers.setTimeout(() => {
        controller.abort(new Error("the approval timed out"));
        resolve({
          behavior: "deny",
          message: `Permission for ${request.toolName} was denied: nobody answered within ${Math.round(this.#options.timeoutMs / 1_000)} s.`,
        });
      }, this.#options.timeoutMs);
    });
    try {
      return await Promise.race([Promise.resolve(callback({ ...request, signal: controller.signal })), timedOut]);
    } catch (error) {
      this.#options.onCallbackError(error, request);
      return { behavior: "deny", message: `Permission for ${request.toolName} was denied: the approval callback failed.` };
    } finally {
      if (timer !== undefined) this.#options.timers.clearTimeout(timer);
    }
  }

  /**
   * A client tool call whose `needsApproval` said so (the call table asks, and bounds the wait with
   * `approvalTimeoutMs`): the callback's answer. Never rejects.
   */
  async approveClientCall(ask: ApprovalAsk): Promise<ApprovalVerdict> {
    const callback = this.#options.canUseTool;
    if (callback === undefined) return { approved: false, reason: "no-approver", message: "" };
    const { record, tool, input, signal } = ask;
    const request: ApprovalRequest = {
      kind: "client-tool",
      toolName: record.toolName,
      input: (typeof input === "object" && input !== null ? input : { value: input }) as Record<string, unknown>,
      toolCallId: record.toolCallId,
      requestId: record.deliveries[0]!.requestId,
      agentId: record.agentId,
      conversationId: record.conversationId,
      suggestions: [],
      annotations: tool.annotations,
      idempotencyKey: record.idempotencyKey,
      signal,
    };
    try {
      const decision = await callback(request);
      if (decision?.behavior === "allow")
        return decision.updatedInput === undefined ? { approved: true } : { approved: true, input: decision.updatedInput };
      if (decision?.behavior === "deny")
        return { approved: false, reason: "declined", message: typeof decision.message === "string" ? decision.message : "" };
      return { approved: false, reason: "failed", message: "canUseTool answered neither allow nor deny" };
    } catch (error) {
      this.#options.onCallbackError(error, request);
      return { approved: false, reason: "failed", message: "the approval callback failed" };
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

const NO_ANNOTATIONS: Readonly<ToolAnnotations> = Object.freeze({});
/** A runtime tool's request gets its own signal when the callback is asked; this one stands in until then. */
const NEVER_ABORTED = new AbortController().signal;

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
