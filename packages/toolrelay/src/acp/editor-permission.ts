/**
 * Permission requests for runtime-owned tools (Bash, Write, ... — the
 * runtime's `can_use_tool`), asked of the user in the editor through ACP
 * `session/request_permission`. Pass the result as `canUseTool` to
 * `createSession`. Client tools (the editor tools included) never get here:
 * the session allows its own tools.
 *
 * Options offered: "Allow once", "Always allow <tool>" (remembered for this
 * ACP session), "Reject". A cancelled request (the user dismissed it, or the
 * turn was cancelled) is a denial.
 */
import type { AgentContext, PermissionOption } from "@agentclientprotocol/sdk";
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

/** A `canUseTool` callback that asks the editor. */
export function editorPermissionDecider(options: EditorPermissionOptions): (request: ApprovalRequest) => Promise<ApprovalDecision> {
  const present = options.present ?? presentToolCall;
  const alwaysAllowed = new Set<string>();
  return async (request) => {
    if (alwaysAllowed.has(request.toolName)) return { behavior: "allow" };
    const presentation = present(request.toolName, request.input);
    const choices: PermissionOption[] = [
      { optionId: ALLOW_ONCE, name: "Allow once", kind: "allow_once" },
      { optionId: ALLOW_ALWAYS, name: `Always allow ${request.toolName}`, kind: "allow_always" },
      { optionId: REJECT_ONCE, name: "Reject", kind: "reject_once" },
    ];
    const signal = options.turnSignal?.();
    let outcome: { outcome: "cancelled" } | { outcome: "selected"; optionId: string };
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
        signal ? { cancellationSignal: signal, stopWaitingOnCancel: true } : undefined,
      );
      outcome = response.outcome;
    } catch (error) {
      if (signal?.aborted) return deny(request.toolName, "the prompt was cancelled");
      return deny(request.toolName, `the editor could not be asked (${error instanceof Error ? error.message : String(error)})`);
    }
    if (outcome.outcome === "cancelled") return deny(request.toolName, "the user cancelled the request");
    if (outcome.optionId === ALLOW_ALWAYS) {
      alwaysAllowed.add(request.toolName);
      return { behavior: "allow" };
    }
    if (outcome.optionId === ALLOW_ONCE) return { behavior: "allow" };
    return deny(request.toolName, "the user rejected it");
  };
}

function deny(toolName: string, why: string): ApprovalDecision {
  return { behavior: "deny", message: `Permission to run ${toolName} was denied in the editor: ${why}.` };
}
