/**
 * `HostCalls`: the tool calls waiting for the host's answer — one entry per
 * `tool_call` frame sent, across every session of the sidecar. The SDK's call
 * table owns the call (deadline, cancellation, the one response to the
 * runtime); this table only carries it to the host and back:
 *
 * - `run` sends `tool_call` and resolves with the host's `tool_result` or
 *   rejects with its `tool_error` message;
 * - when the SDK aborts the call (timeout, abort, close, link lost) it sends
 *   `cancel` with the reason, and the entry is gone: a later answer is late;
 * - `answer` takes the host's frame: `answered`, `late` (a call it already
 *   cancelled or answered, remembered for the last 4,096), or `unknown`.
 *
 * All per-call cleanup (abort listener, entry) happens in one `finish`, once.
 */
import { ToolCallAbortError } from "../tools/index.js";
import type { ToolCallContext, ToolResult } from "../tools/index.js";
import type { SidecarFrame } from "./sidecar-frames.js";

/** Call ids remembered after their end, so that a late answer is told from a wrong one. */
export const REMEMBERED_FINISHED_CALLS = 4_096;

export interface HostCallRequest {
  session: string;
  turn: string | null;
  tool: string;
  input: unknown;
  timeoutMs: number;
  context: ToolCallContext;
  /** Told the call id once the `tool_call` frame is written. */
  onSent?(call: string): void;
}

/** What the host answered: a result, or the message of a tool error. */
export type HostAnswer = { kind: "result"; result: ToolResult } | { kind: "error"; message: string };

export type AnswerDisposition = "answered" | "late" | "unknown";

/** A `tool_error` of the host, as the SDK's tool error (the model reads the message). */
export class HostToolError extends Error {
  override name = "HostToolError";
}

interface PendingCall {
  session: string;
  settle(answer: HostAnswer): void;
}

export class HostCalls {
  #send: (frame: SidecarFrame) => void;
  #pending = new Map<string, PendingCall>();
  /** Finished call ids, oldest first (a Map keeps insertion order). */
  #finished = new Map<string, string>();
  #next = 0;

  constructor(send: (frame: SidecarFrame) => void) {
    this.#send = send;
  }

  /** Calls waiting for the host. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /** Send the call to the host; settles with its answer, or rejects once the SDK aborts the call. */
  run(request: HostCallRequest): Promise<ToolResult> {
    const { context, session } = request;
    const { signal } = context;
    if (signal.aborted) return Promise.reject(abortReasonOf(signal));
    const call = `call-${++this.#next}`;
    return new Promise<ToolResult>((resolve, reject) => {
      const finish = (): void => {
        // The listener is removed, not left behind ({ once } alone leaks on a long-lived signal).
        signal.removeEventListener("abort", onAbort);
        this.#pending.delete(call);
        this.#finished.set(call, session);
        if (this.#finished.size > REMEMBERED_FINISHED_CALLS) this.#finished.delete(this.#finished.keys().next().value!);
      };
      const onAbort = (): void => {
        finish();
        const abort = abortReasonOf(signal);
        this.#send({ type: "cancel", session, call, reason: abort.kind, message: abort.message });
        reject(abort);
      };
      this.#pending.set(call, {
        session,
        settle: (answer) => {
          finish();
          if (answer.kind === "result") resolve(answer.result);
          else reject(new HostToolError(answer.message));
        },
      });
      signal.addEventListener("abort", onAbort);
      this.#send({
        type: "tool_call",
        session,
        call,
        turn: request.turn,
        tool: request.tool,
        tool_call_id: context.toolCallId,
        agent_id: context.agentId,
        conversation_id: context.conversationId,
        input: request.input,
        timeout_ms: request.timeoutMs,
      });
      request.onSent?.(call);
    });
  }

  /** The host's answer to `call` of `session`. */
  answer(session: string, call: string, answer: HostAnswer): AnswerDisposition {
    const pending = this.#pending.get(call);
    if (pending !== undefined && pending.session === session) {
      pending.settle(answer);
      return "answered";
    }
    return this.#finished.get(call) === session ? "late" : "unknown";
  }

  /**
   * Forget the host: every waiting call of `session` (of all sessions without
   * one) is settled as a tool error now. The SDK has usually aborted them
   * already (a closing session cancels its calls); this makes sure no promise
   * is left waiting for a host that is gone.
   */
  abandon(message: string, session?: string): void {
    for (const [, pending] of [...this.#pending]) {
      if (session === undefined || pending.session === session) pending.settle({ kind: "error", message });
    }
  }
}

function abortReasonOf(signal: AbortSignal): ToolCallAbortError {
  const reason: unknown = signal.reason;
  return ToolCallAbortError.is(reason) ? reason : ToolCallAbortError.cancelled("the call was aborted");
}
