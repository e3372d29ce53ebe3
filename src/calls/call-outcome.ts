/**
 * The one outcome of a tool call, and what the runtime receives for it (the
 * settlement table of DESIGN.md). `responseForOutcome` is the only place that
 * turns an outcome into wire text.
 */
import type {
  ExecutionOutcome,
  PreflightOutcome,
  ToolCallResponseBody,
  ToolAnnotations,
  InputIssue,
  WireContentBlock,
} from "./outcome-shapes.js";

/** The tool ran past its `timeoutMs`; its effects are unknown. */
export interface TimeoutOutcome {
  kind: "timeout";
  timeoutMs: number;
}

/** The turn was aborted, the session closed, or the caller's signal fired. */
export interface CancelledOutcome {
  kind: "cancelled";
  reason: string;
}

/** The link was lost and did not come back within the grace window; nothing could be sent. */
export interface DisconnectedOutcome {
  kind: "disconnected";
  graceMs: number;
}

/** How one tool call ended. Exactly one per execution. */
export type CallOutcome = ExecutionOutcome | PreflightOutcome | TimeoutOutcome | CancelledOutcome | DisconnectedOutcome;

/** Every `kind` of {@link CallOutcome}. */
export type CallOutcomeKind = CallOutcome["kind"];

export interface ResponseForOutcomeOptions {
  /** The tool's name as the runtime asked for it. */
  toolName: string;
  /** The tool's annotations; decide whether a timeout is safe to retry. Default `{}`. */
  annotations?: ToolAnnotations;
}

/** At most this many input issues are listed; the rest are counted. */
export const MAX_LISTED_INPUT_ISSUES = 20;

/** What the runtime receives for `outcome` (the body of `external_tool_call_response`). */
export function responseForOutcome(outcome: CallOutcome, options: ResponseForOutcomeOptions): ToolCallResponseBody {
  const { toolName } = options;
  switch (outcome.kind) {
    case "ok":
      return { result: { content: outcome.content } };
    case "tool-error":
      return {
        result: { content: outcome.content.length > 0 ? outcome.content : textContent(outcome.message), is_error: true },
      };
    case "invalid-input":
      return { result: { content: textContent(invalidInputText(toolName, outcome.issues)), is_error: true } };
    case "unknown-tool": {
      const available = outcome.available.length > 0 ? outcome.available.join(", ") : "(none)";
      return { error: `Unknown client tool: ${outcome.toolName}. Client tools in this session: ${available}` };
    }
    case "input-too-large":
      return {
        result: {
          content: textContent(
            `The input for tool ${toolName} is ${outcome.bytes} bytes, over the limit of ${outcome.limit} bytes. ` +
              "Call it again with a smaller input.",
          ),
          is_error: true,
        },
      };
    case "timeout": {
      const safe = options.annotations?.readOnlyHint === true || options.annotations?.idempotentHint === true;
      const advice = safe
        ? " It has no side effects; it is safe to retry."
        : " It may have applied its effects: inspect state before retrying.";
      return { result: { content: textContent(`Tool ${toolName} timed out after ${outcome.timeoutMs} ms.${advice}`), is_error: true } };
    }
    case "cancelled":
      return { error: `Tool call cancelled: ${outcome.reason}` };
    case "disconnected":
      return {
        error: `Tool ${toolName} was interrupted when the client lost its connection; outcome unknown: inspect state before retrying.`,
      };
  }
}

/**
 * The answer to a duplicate whose cached outcome was evicted: the call ran,
 * but what it did is no longer known. Never a second execution.
 */
export function expiredResponse(toolCallId: string): ToolCallResponseBody {
  return {
    error: `Result expired; outcome unknown: the call ${toolCallId} already ran. Inspect state before retrying.`,
  };
}

function textContent(text: string): WireContentBlock[] {
  return [{ type: "text", text }];
}

function invalidInputText(toolName: string, issues: readonly InputIssue[]): string {
  const listed = issues.slice(0, MAX_LISTED_INPUT_ISSUES).map((issue) => `- ${issue.path || "(root)"}: ${issue.message}`);
  if (listed.length === 0) listed.push("- (root): the input does not match the tool's schema");
  if (issues.length > MAX_LISTED_INPUT_ISSUES) listed.push(`- and ${issues.length - MAX_LISTED_INPUT_ISSUES} more`);
  return `Invalid input for tool ${toolName}:\n${listed.join("\n")}\nFix the arguments and call again.`;
}
