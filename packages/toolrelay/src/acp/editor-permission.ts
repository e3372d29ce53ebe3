/**
 * The session's approvals, asked of the user in the editor through ACP
 * `session/request_permission`. Pass the result as `canUseTool` to
 * `createSession` (`startAcpAgent` does). It answers both kinds of
 * {@link ApprovalRequest}:
 * - `runtime-tool`: a call of one of the runtime's own tools (Bash, Write, ...)
 *   its permission mode does not let run at once (the runtime's `can_use_tool`);
 * - `client-tool`: a call of a client tool whose `needsApproval` says so (the
 *   editor tool `write_via_editor`, or any tool of the session's own). Its title
 *   and kind come from the tool's annotations when the presenter does not know
 *   the tool (see `presentToolCall`).
 *
 * Options offered: "Allow once", "Always allow <tool>" (remembered for this
 * ACP session, per kind and tool name), "Reject". A cancelled request (the
 * user dismissed it) is a denial. When the question becomes moot before the
 * user answers — the request's `signal` fires (the approval timed out, the
 * call was cancelled, the session closed) or the prompt turn is cancelled
 * (`session/cancel`, `session/close`) — the pending editor request is
 * cancelled with `$/cancel_request` (the editor closes its dialog) and the tool
 * is denied.
 *
 * What the model reads: for a runtime tool, the deny message ("Permission to
 * run Bash was denied in the editor: the user rejected it."); for a client
 * tool, the session's declined text ("The user declined this call of tool X;
 * it was not run."), with no message of its own since the user only clicked.
 * An editor that cannot be asked (the request failed) is, for a client tool,
 * a failed approval (the callback throws), not a user's decline.
 */
import type { AgentContext, PermissionOption, RequestPermissionOutcome } from "@agentclientprotocol/sdk";
import type { ApprovalDecision, ApprovalRequest } from "../session/approval-responder.js";
import { presentToolCall, type ToolCallPresenter } from "./tool-call-presentation.js";

/** Options of `editorPermissionDecider`. */
export interface EditorPermissionOptions {
  /** The agent-side context used to call the editor. */
  client: AgentContext;
  /** The ACP session. */
  sessionId: string;
  /** Title and kind shown with the request. Default {@link presentToolCall}. */
  present?: ToolCallPresenter | undefined;
  /**
   * The signal of the running prompt turn, if any: when it fires (ACP
   * `session/cancel`), the pending permission request is cancelled and the
   * tool denied. Default: none.
   */
  turnSignal?: (() => AbortSignal | undefined) | undefined;
}

const ALLOW_ONCE = "allow_once";
const ALLOW_ALWAYS = "allow_always";
const REJECT_ONCE = "reject_once";

/** A `canUseTool` callback that asks the editor, for runtime tools and client tools alike. */
export function editorPermissionDecider(options: EditorPermissionOptions): (request: ApprovalRequest) => Promise<ApprovalDecision> {
  const present = options.present ?? presentToolCall;
  const alwaysAllowed = new Set<string>();
  return async (request) => {
    const remembered = `${request.kind}:${request.toolName}`;
    if (alwaysAllowed.has(remembered)) return { behavior: "allow" };
    const presentation =
      request.kind === "client-tool"
        ? present(request.toolName, request.input, request.annotations)
        : present(request.toolName, request.input);
    const choices: PermissionOption[] = [
      { optionId: ALLOW_ONCE, name: "Allow once", kind: "allow_once" },
      { optionId: ALLOW_ALWAYS, name: `Always allow ${request.toolName}`, kind: "allow_always" },
      { optionId: REJECT_ONCE, name: "Reject", kind: "reject_once" },
    ];
    const turnSignal = options.turnSignal?.();
    const moot = turnSignal === undefined ? request.signal : AbortSignal.any([request.signal, turnSignal]);
    if (moot.aborted) return deny(request, whyMoot(request.signal, turnSignal));
    let outcome: RequestPermissionOutcome;
    try {
      const response = await options.client.request(
        "session/request_permission",
        {
          sessionId: options.sessionId,
          toolCall: {
            toolCallId: request.toolCallId ?? `permission-${request.requestId}`,
            title: presentation.title,
            kind: presentation.kind,
            status: "pending",
            rawInput: request.input,
            locations: presentation.locations,
          },
          options: choices,
        },
        // Aborting sends `$/cancel_request` for this request and stops waiting for the editor's answer.
        { cancellationSignal: moot, stopWaitingOnCancel: true },
      );
      outcome = response.outcome;
    } catch (error) {
      if (moot.aborted) return deny(request, whyMoot(request.signal, turnSignal));
      const why = `the editor could not be asked (${error instanceof Error ? error.message : String(error)})`;
      if (request.kind === "client-tool") throw new Error(why, { cause: error });
      return deny(request, why);
    }
    if (outcome.outcome === "cancelled") return deny(request, "the user cancelled the request", { userDecided: true });
    if (outcome.optionId === ALLOW_ALWAYS) {
      alwaysAllowed.add(remembered);
      return { behavior: "allow" };
    }
    if (outcome.optionId === ALLOW_ONCE) return { behavior: "allow" };
    return deny(request, "the user rejected it", { userDecided: true });
  };
}

/** Why the question was withdrawn before the user answered. */
function whyMoot(requestSignal: AbortSignal, turnSignal: AbortSignal | undefined): string {
  if (turnSignal?.aborted) return "the prompt was cancelled";
  const reason: unknown = requestSignal.reason;
  const detail = reason instanceof Error ? reason.message : typeof reason === "string" ? reason : undefined;
  return detail ? `the request was withdrawn before the user answered (${detail})` : "the request was withdrawn before the user answered";
}

/** A runtime tool's denial names the editor and why; a client tool the user declined gets the session's declined text alone. */
function deny(request: ApprovalRequest, why: string, how: { userDecided?: boolean } = {}): ApprovalDecision {
  if (request.kind === "client-tool" && how.userDecided === true) return { behavior: "deny", message: "" };
  return { behavior: "deny", message: `Permission to run ${request.toolName} was denied in the editor: ${why}.` };
}
