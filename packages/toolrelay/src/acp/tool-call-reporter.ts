/**
 * Turns what a toolrelay turn reports about tool calls into ACP session
 * updates: one `tool_call` when a call is first seen, then `tool_call_update`s
 * whose status only moves forward: `pending` → `in_progress` → `completed` |
 * `failed`.
 *
 * Sources, which may arrive in either order (session events are synchronous,
 * turn events are read asynchronously):
 * - the turn's `tool-call` event (the model called a tool; it has the input) → `pending`;
 * - the session's `tool-call-start` (a client tool's callback starts) → `in_progress`;
 * - the session's `tool-call-end` (a client tool call settled, with its outcome) → `completed` for `ok`, `failed` otherwise;
 * - the turn's `tool-result` (what the model receives; the only end of a runtime tool) → `completed` / `failed`.
 *
 * Whichever comes first announces the call; a call that ended ignores the rest.
 */
import type { SessionUpdate, ToolCallStatus } from "@agentclientprotocol/sdk";
import { responseForOutcome, type CallOutcome } from "../calls/index.js";
import type { ToolCallPresenter } from "./tool-call-presentation.js";

export interface ToolCallReporterOptions {
  /** Sends one update to the editor (in call order). */
  send(update: SessionUpdate): void;
  /** Title, kind and locations of a call. */
  present: ToolCallPresenter;
  /** Result text shown in the editor is cut to this many characters. Default 2_000. */
  maxContentChars?: number | undefined;
}

interface ReportedCall {
  toolName: string;
  status: ToolCallStatus;
}

const ORDER: Record<ToolCallStatus, number> = { pending: 0, in_progress: 1, completed: 2, failed: 2 };

export class ToolCallReporter {
  #options: ToolCallReporterOptions;
  #calls = new Map<string, ReportedCall>();

  constructor(options: ToolCallReporterOptions) {
    this.#options = options;
  }

  /** The status last reported for a call, if it was announced. */
  statusOf(toolCallId: string): ToolCallStatus | undefined {
    return this.#calls.get(toolCallId)?.status;
  }

  /** The model called a tool (turn `tool-call`). */
  called(toolCallId: string, toolName: string, input: unknown): void {
    const presentation = this.#options.present(toolName, input);
    const known = this.#calls.get(toolCallId);
    if (known === undefined) {
      this.#calls.set(toolCallId, { toolName, status: "pending" });
      this.#options.send({
        sessionUpdate: "tool_call",
        toolCallId,
        name: toolName,
        title: presentation.title,
        kind: presentation.kind,
        status: "pending",
        rawInput: input,
        locations: presentation.locations,
      });
      return;
    }
    // Announced by tool-call-start before the input was known: fill it in.
    this.#options.send({
      sessionUpdate: "tool_call_update",
      toolCallId,
      title: presentation.title,
      kind: presentation.kind,
      rawInput: input,
      locations: presentation.locations,
    });
  }

  /** A client tool's callback started (session `tool-call-start`). */
  started(toolCallId: string, toolName: string): void {
    this.#announce(toolCallId, toolName);
    this.#advance(toolCallId, "in_progress");
  }

  /** A client tool call settled (session `tool-call-end`). */
  ended(toolCallId: string, toolName: string, outcome: CallOutcome): void {
    this.#announce(toolCallId, toolName);
    this.#advance(toolCallId, outcome.kind === "ok" ? "completed" : "failed", outcomeText(toolName, outcome));
  }

  /** The model received a tool result (turn `tool-result`). */
  resulted(toolCallId: string, toolName: string | undefined, isError: boolean, text: string): void {
    this.#announce(toolCallId, toolName ?? "tool");
    this.#advance(toolCallId, isError ? "failed" : "completed", text);
  }

  /** The turn ended: every call still open is reported `failed` with `reason`. */
  finishOpen(reason: string): void {
    for (const [toolCallId, call] of this.#calls) {
      if (ORDER[call.status] < 2) this.#advance(toolCallId, "failed", reason);
    }
  }

  #announce(toolCallId: string, toolName: string): void {
    if (this.#calls.has(toolCallId)) return;
    const presentation = this.#options.present(toolName, undefined);
    this.#calls.set(toolCallId, { toolName, status: "pending" });
    this.#options.send({
      sessionUpdate: "tool_call",
      toolCallId,
      name: toolName,
      title: presentation.title,
      kind: presentation.kind,
      status: "pending",
    });
  }

  #advance(toolCallId: string, status: ToolCallStatus, text?: string): void {
    const call = this.#calls.get(toolCallId)!;
    if (ORDER[status] <= ORDER[call.status]) return;
    call.status = status;
    const update: SessionUpdate = { sessionUpdate: "tool_call_update", toolCallId, status };
    if (text !== undefined) update.content = [{ type: "content", content: { type: "text", text: this.#clamp(text) } }];
    this.#options.send(update);
  }

  #clamp(text: string): string {
    const max = this.#options.maxContentChars ?? 2_000;
    if (text.length <= max) return text;
    return `${text.slice(0, max)}\n… (${text.length - max} more characters not shown here; the model received them all)`;
  }
}

/** What the runtime (and so the model) received for a settled client call, as text. */
function outcomeText(toolName: string, outcome: CallOutcome): string {
  const body = responseForOutcome(outcome, { toolName });
  if ("error" in body) return body.error;
  const texts = body.result.content.flatMap((block) => (block.type === "text" ? [block.text] : ["[image]"]));
  return texts.join("\n");
}
