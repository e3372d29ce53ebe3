/**
 * The one outcome of a tool call, and what the runtime receives for it. `responseForOutcome` is the
 * only place that turns an outcome into wire text. Failures the model must not mistake for results
 * name the tool and start with `Error:` (the runtime's OpenAI-compatible conversion drops `is_error`).
 */
import type { ExecutionOutcome, InputIssue } from "../tools/index.js";
import type { ToolCallResponseBody, WireContentBlock } from "../wire/index.js";

/** A call refused before its callback ran: no such tool, an input over `maxInputBytes`, or one its schema refused. */
export type PreflightOutcome =
  | { kind: "unknown-tool"; toolName: string; available: string[] }
  | { kind: "input-too-large"; bytes: number; limit: number }
  | { kind: "invalid-input"; issues: InputIssue[] };

/** The tool ran past its `timeoutMs`; its effects are unknown. */
export type TimeoutOutcome = { kind: "timeout"; timeoutMs: number };
/** The turn was aborted or the session closed. */
export type CancelledOutcome = { kind: "cancelled"; reason: string };
/** The link was lost and not back within the grace window, or the runtime forgot the call. */
export type DisconnectedOutcome = { kind: "disconnected"; graceMs: number };
/** Refused unrun: the session already ran `maxConcurrentCalls` calls. */
export type BusyOutcome = { kind: "busy"; limit: number };

/**
 * Not run: the call needed approval (`needsApproval`) and did not get it. `reason`: the app's
 * approver said no (`declined`, `message` is its words), nobody answered within the approval
 * timeout (`timeout`), the session has no approver (`no-approver`: no `canUseTool`), or the
 * approval check itself failed (`failed`: `needsApproval` or the approver threw).
 */
export type DeniedOutcome = { kind: "denied"; reason: "declined" | "timeout" | "no-approver" | "failed"; message: string };

/**
 * Answered from the call journal (call-journal.ts): the call ran in an earlier life of the process
 * (or in another process sharing the journal) and settled; `response` is what the model got then,
 * sent again byte for byte. Not run again.
 */
export type RecordedOutcome = { kind: "recorded"; response: ToolCallResponseBody; settledAt: number };

/**
 * Not run again: the call journal says the call `started` (in an earlier life of the process, or
 * in another process) and never settled, or its record `expired`. What it did is unknown.
 */
export type OutcomeUnknownOutcome = { kind: "outcome-unknown"; reason: "started" | "expired"; startedAt: number };

/** Not run: the call journal could not be read or written before the callback would have started. */
export type JournalFailedOutcome = { kind: "journal-failed"; message: string };

/** How one tool call ended. Exactly one per call. */
export type CallOutcome =
  | ExecutionOutcome
  | PreflightOutcome
  | DeniedOutcome
  | TimeoutOutcome
  | CancelledOutcome
  | DisconnectedOutcome
  | BusyOutcome
  | RecordedOutcome
  | OutcomeUnknownOutcome
  | JournalFailedOutcome;

/** At most this many input issues are listed; the rest are counted. */
export const MAX_LISTED_INPUT_ISSUES = 20;

/**
 * What the runtime receives for `outcome` (the body of `external_tool_call_response`) from the tool
 * `toolName`; `safeToRetry` (default `false`): the tool promised no side effects, a timeout says so.
 */
export function responseForOutcome(
  outcome: CallOutcome,
  options: { toolName: string; safeToRetry?: boolean | undefined },
): ToolCallResponseBody {
  const { toolName } = options;
  switch (outcome.kind) {
    case "ok":
      return { result: { content: outcome.content } };
    case "tool-error":
      return { result: { content: outcome.content.length > 0 ? outcome.content : text(`Error: ${outcome.message}`), is_error: true } };
    case "invalid-input":
      return errorResult(invalidInputText(toolName, outcome.issues));
    case "unknown-tool": {
      const available = outcome.available.length > 0 ? outcome.available.join(", ") : "(none)";
      return { error: `Unknown client tool: ${outcome.toolName}. Client tools in this session: ${available}` };
    }
    case "input-too-large":
      return errorResult(
        `Error: the input for tool ${toolName} is ${outcome.bytes} bytes, over the limit of ${outcome.limit} bytes. Call it again with a smaller input.`,
      );
    case "timeout": {
      const advice =
        options.safeToRetry === true
          ? " It has no side effects; it is safe to retry."
          : " It may have applied its effects: inspect state before retrying.";
      return errorResult(`Error: tool ${toolName} timed out after ${outcome.timeoutMs} ms.${advice}`);
    }
    case "cancelled":
      return { error: `Tool call cancelled: ${outcome.reason}` };
    case "disconnected":
      return {
        error: `Tool ${toolName} was interrupted when the client lost its connection; outcome unknown: inspect state before retrying.`,
      };
    case "busy":
      return { error: `Tool ${toolName} was not run: the client is already running ${outcome.limit} tool calls. Try again later.` };
    case "denied":
      return { result: { content: text(deniedText(toolName, outcome)) } };
    case "recorded":
      return outcome.response;
    case "outcome-unknown":
      return { error: outcomeUnknownText(toolName, outcome.reason) };
    case "journal-failed":
      return {
        error: `Tool ${toolName} was not run: its call record could not be written (${outcome.message}). Nothing was done; try again later.`,
      };
  }
}

/** What the model reads for a call the journal says already started (or whose record expired): never a second run. */
export function outcomeUnknownText(toolName: string, reason: OutcomeUnknownOutcome["reason"]): string {
  return reason === "started"
    ? `Tool ${toolName} was not run again: this call already started before the client restarted, and its outcome is unknown. Inspect state before retrying.`
    : `Tool ${toolName} was not run again: this call already ran and its record has expired; outcome unknown. Inspect state before retrying.`;
}

/**
 * What the model reads for a call that was not approved: not an error of the tool (no `Error:`
 * marker, no `is_error`), and never mistaken for a result: it says the call did not run.
 */
export function deniedText(toolName: string, outcome: DeniedOutcome): string {
  switch (outcome.reason) {
    case "declined":
      return `The user declined this call of tool ${toolName}; it was not run.${outcome.message ? ` The user said: ${outcome.message}` : ""}`;
    case "timeout":
      return `Tool ${toolName} was not run: it needs the user's approval and nobody answered in time (${outcome.message}).`;
    case "no-approver":
      return `Tool ${toolName} was not run: it needs the user's approval and this application cannot ask for it.`;
    case "failed":
      return `Tool ${toolName} was not run: its approval could not be checked (${outcome.message}).`;
  }
}

/** The answer for a call whose outcome was forgotten (evicted): it ran, what it did is no longer known. Never a second run. */
export function expiredResponse(toolCallId: string): ToolCallResponseBody {
  return { error: `Result expired; outcome unknown: the call ${toolCallId} already ran. Inspect state before retrying.` };
}

function text(value: string): WireContentBlock[] {
  return [{ type: "text", text: value }];
}

function errorResult(message: string): ToolCallResponseBody {
  return { result: { content: text(message), is_error: true } };
}

function invalidInputText(toolName: string, issues: readonly InputIssue[]): string {
  const listed = issues.slice(0, MAX_LISTED_INPUT_ISSUES).map((issue) => `- ${issue.path || "(root)"}: ${issue.message}`);
  if (listed.length === 0) listed.push("- (root): the input does not match the tool's schema");
  if (issues.length > MAX_LISTED_INPUT_ISSUES) listed.push(`- and ${issues.length - MAX_LISTED_INPUT_ISSUES} more`);
  return `Error: invalid input for tool ${toolName}:\n${listed.join("\n")}\nFix the arguments and call again.`;
}
