/**
 * `HostApprovals`: the approvals waiting for the host's answer — one entry per
 * `approval_request` frame sent, across every session of the sidecar. The SDK
 * owns the approval (its `approvalTimeoutMs`, the denied outcome, what the
 * model reads); this table only carries the question to the host and back:
 *
 * - `ask` sends `approval_request` and resolves with the host's
 *   `approval_response` as the SDK's `ApprovalDecision`;
 * - when the question is moot (the SDK's `signal`: the approval timed out, the
 *   call was cancelled, the session closed) it sends `approval_cancel` and the
 *   entry is gone: a later answer is late and ignored;
 * - `answer` takes the host's frame: `answered`, `late` (an approval it
 *   cancelled), `repeated` (one the host already answered), `other-session`
 *   (waiting, but in another session: left waiting) or `unknown`. The last
 *   4,096 finished approvals are remembered to tell them apart.
 *
 * All per-approval cleanup (abort listener, entry) happens in one `finish`, once.
 */
import type { ApprovalDecision, ApprovalRequest } from "../session/approval-responder.js";
import { ToolCallAbortError } from "../tools/index.js";
import type { ApprovalResponseFrame } from "./host-frames.js";
import type { SidecarCancelReason } from "./protocol-values.js";
import type { SidecarFrame } from "./sidecar-frames.js";

/** Approval ids remembered after their end, so that a late or repeated answer is told from a wrong one. */
export const REMEMBERED_FINISHED_APPROVALS = 4_096;

export interface HostApprovalRequest {
  session: string;
  turn: string | null;
  /** How long the SDK waits for the answer (told to the host as `timeout_ms`). */
  timeoutMs: number;
  request: ApprovalRequest;
}

/** The host's answer, as the frame carries it. */
export type HostApprovalAnswer = Pick<ApprovalResponseFrame, "allow" | "message" | "updated_input">;

export type ApprovalAnswerDisposition = "answered" | "late" | "repeated" | "other-session" | "unknown";

interface PendingApproval {
  session: string;
  settle(answer: HostApprovalAnswer): void;
}

interface FinishedApproval {
  session: string;
  how: "answered" | "cancelled";
}

export class HostApprovals {
  #send: (frame: SidecarFrame) => void;
  #pending = new Map<string, PendingApproval>();
  /** Finished approval ids, oldest first (a Map keeps insertion order). */
  #finished = new Map<string, FinishedApproval>();
  #next = 0;

  constructor(send: (frame: SidecarFrame) => void) {
    this.#send = send;
  }

  /** Approvals waiting for the host. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /** Ask the host; resolves with its decision, or a deny once the question is moot (the SDK no longer reads it then). */
  ask(ask: HostApprovalRequest): Promise<ApprovalDecision> {
    const { request, session } = ask;
    const { signal } = request;
    if (signal.aborted) return Promise.resolve(mootDecision(request.toolName));
    const approval = `approval-${++this.#next}`;
    return new Promise<ApprovalDecision>((resolve) => {
      const finish = (how: FinishedApproval["how"]): void => {
        signal.removeEventListener("abort", onAbort);
        this.#pending.delete(approval);
        this.#finished.set(approval, { session, how });
        if (this.#finished.size > REMEMBERED_FINISHED_APPROVALS) this.#finished.delete(this.#finished.keys().next().value!);
      };
      const onAbort = (): void => {
        finish("cancelled");
        const { reason, message } = mootReasonOf(signal);
        this.#send({ type: "approval_cancel", session, approval, reason, message });
        resolve(mootDecision(request.toolName));
      };
      this.#pending.set(approval, {
        session,
        settle: (answer) => {
          finish("answered");
          resolve(decisionOf(answer, request));
        },
      });
      signal.addEventListener("abort", onAbort);
      this.#send({
        type: "approval_request",
        session,
        approval,
        turn: ask.turn,
        kind: request.kind === "client-tool" ? "client_tool" : "runtime_tool",
        tool: request.toolName,
        tool_call_id: request.toolCallId ?? null,
        agent_id: request.agentId,
        conversation_id: request.conversationId,
        input: request.input,
        annotations: { ...request.annotations },
        idempotency_key: request.idempotencyKey ?? null,
        timeout_ms: ask.timeoutMs,
      });
    });
  }

  /** The host's answer to `approval` of `session`. Only `answered` settles anything. */
  answer(session: string, approval: string, answer: HostApprovalAnswer): ApprovalAnswerDisposition {
    const pending = this.#pending.get(approval);
    if (pending !== undefined) {
      if (pending.session !== session) return "other-session";
      pending.settle(answer);
      return "answered";
    }
    const finished = this.#finished.get(approval);
    if (finished === undefined || finished.session !== session) return "unknown";
    return finished.how === "cancelled" ? "late" : "repeated";
  }

  /**
   * Forget the host: every waiting approval of `session` (of all sessions without one) is denied
   * now. The SDK has usually given up on them already (a closing session cancels its calls); this
   * makes sure no promise is left waiting for a host that is gone.
   */
  abandon(message: string, session?: string): void {
    for (const [, pending] of [...this.#pending]) {
      if (session === undefined || pending.session === session) pending.settle({ allow: false, message });
    }
  }
}

/** The SDK's decision for the host's answer. A runtime tool's denial needs words for the model; a client tool's gets the SDK's declined text. */
function decisionOf(answer: HostApprovalAnswer, request: ApprovalRequest): ApprovalDecision {
  if (answer.allow)
    return answer.updated_input === undefined ? { behavior: "allow" } : { behavior: "allow", updatedInput: answer.updated_input };
  const message = answer.message ?? "";
  if (request.kind === "client-tool" || message !== "") return { behavior: "deny", message };
  return { behavior: "deny", message: `The user denied permission for ${request.toolName}; it was not run.` };
}

function mootDecision(toolName: string): ApprovalDecision {
  return { behavior: "deny", message: `The approval for ${toolName} is moot.` };
}

/** Why the SDK stopped waiting, as `approval_cancel` says it. */
function mootReasonOf(signal: AbortSignal): { reason: SidecarCancelReason; message: string } {
  const reason: unknown = signal.reason;
  if (ToolCallAbortError.is(reason)) {
    // The SDK denies a client tool call past its approval timeout with a `cancelled` abort naming the timeout.
    const kind = / \(timeout\)$/.test(reason.message) ? "timeout" : reason.kind;
    return { reason: kind, message: reason.message };
  }
  const message = reason instanceof Error ? reason.message : "the approval is moot";
  return { reason: /timed out/.test(message) ? "timeout" : "cancelled", message };
}
