/**
 * One ACP prompt turn over a toolrelay session: `session/prompt` →
 * `session.send(...)`, and the turn's events → `session/update`
 * notifications for the editor:
 *
 * | toolrelay                                   | ACP session update                          |
 * | ------------------------------------------- | ------------------------------------------- |
 * | turn `assistant`                            | `agent_message_chunk`                       |
 * | turn `reasoning`                            | `agent_thought_chunk`                       |
 * | turn `tool-call`                            | `tool_call` (`pending`)                     |
 * | session `tool-call-start` (client tool)     | `tool_call_update` `in_progress`            |
 * | session `tool-call-end` (client tool)       | `tool_call_update` `completed` / `failed`   |
 * | turn `tool-result` (runtime tool)           | `tool_call_update` `completed` / `failed`   |
 * | turn `error`                                | `agent_message_chunk` with the error text   |
 * | turn `stop`                                 | the `session/prompt` response's stopReason  |
 *
 * Ordering: the session's events are synchronous, the turn's are read
 * asynchronously, so a `tool-call-start` can fire before the loop below has
 * read the text and the `tool-call` that preceded it. A session event for a
 * call therefore waits until the turn's `tool-call` for that call was
 * reported — at most until the next macrotask, after which it is reported on
 * its own — so the editor sees text, `tool_call`, `in_progress`, result in the
 * order they happened.
 *
 * Aborting `signal` (ACP `session/cancel`) aborts the turn: the runtime is
 * told, every pending client tool call of the session is answered as
 * cancelled at once (their signals fire, so their editor requests are
 * cancelled too), and the prompt resolves with `stopReason: "cancelled"`.
 */
// biome-ignore lint/style/noRestrictedImports: one event-loop turn (AfterToolCallSeen), not a delay
import { setImmediate } from "node:timers";
import {
  RequestError,
  type AgentContext,
  type ContentBlock,
  type PromptResponse,
  type SessionUpdate,
  type StopReason,
} from "@agentclientprotocol/sdk";
import type { MessageInput, SendOptions } from "../session/session.js";
import type { ToolCallEndEvent, ToolCallStartEvent } from "../session/session-events.js";
import type { TurnResult } from "../session/turn.js";
import type { TurnEvent } from "../session/turn-events.js";
import type { ClientTool } from "../tools/index.js";
import { messageFromPrompt } from "./prompt-content.js";
import { presentToolCall, type ToolCallPresenter } from "./tool-call-presentation.js";
import { ToolCallReporter } from "./tool-call-reporter.js";

/**
 * What the bridge needs of a toolrelay `Session` (structural, so that a
 * session from the `toolrelay` entry point fits the `toolrelay/acp` types).
 */
export interface AcpPromptSession {
  /** `Session.send`: one turn. */
  send(message: MessageInput, options?: SendOptions): AsyncIterable<TurnEvent> & { readonly result: Promise<TurnResult> };
  /** Listen to the session's client tool calls starting. */
  on(event: "tool-call-start", listener: (event: ToolCallStartEvent) => void): unknown;
  /** Listen to the session's client tool calls ending. */
  on(event: "tool-call-end", listener: (event: ToolCallEndEvent) => void): unknown;
  /** Stop listening (the prompt turn is over). */
  off(event: "tool-call-start", listener: (event: ToolCallStartEvent) => void): unknown;
  /** Stop listening (the prompt turn is over). */
  off(event: "tool-call-end", listener: (event: ToolCallEndEvent) => void): unknown;
}

/** Options of `runAcpPrompt`: one ACP prompt turn over a toolrelay session. */
export interface RunAcpPromptOptions {
  /** The toolrelay session of this ACP session (a `Session` from `createSession`). */
  session: AcpPromptSession;
  /** The agent-side context used to notify the editor. */
  client: AgentContext;
  /** The ACP session id. */
  sessionId: string;
  /** The prompt's content blocks. */
  prompt: readonly ContentBlock[];
  /** Aborting it cancels the turn (wire it to `session/cancel`). */
  signal?: AbortSignal | undefined;
  /** Title, kind and locations of tool calls. Default {@link presentToolCall}. */
  present?: ToolCallPresenter | undefined;
  /**
   * The session's client tools: a call of one of them is presented with its annotations (title,
   * hints), as its permission request is. Default: none (every call presented by name and input).
   */
  tools?: readonly Pick<ClientTool, "name" | "annotations">[] | undefined;
  /** Tool result text shown in the editor is cut to this many characters. Default 2_000. */
  maxToolContentChars?: number | undefined;
  /** A `session/update` notification could not be sent (the connection closed). Default: ignored. */
  onNotifyError?: ((error: unknown) => void) | undefined;
}

/**
 * Run one prompt turn. Resolves with the ACP stop reason (`cancelled` whenever
 * `signal` fired). Rejects with a `RequestError` when the turn could not run
 * (a turn already running, the runtime link lost) or ended in an error.
 */
export async function runAcpPrompt(options: RunAcpPromptOptions): Promise<PromptResponse> {
  const { session, client, sessionId, signal } = options;
  const send = (update: SessionUpdate): void => {
    client.notify("session/update", { sessionId, update }).catch((error: unknown) => options.onNotifyError?.(error));
  };
  const present = options.present ?? presentToolCall;
  const annotations = new Map((options.tools ?? []).map((tool) => [tool.name, tool.annotations]));
  const reporter = new ToolCallReporter({
    send,
    present: (toolName, input) => present(toolName, input, annotations.get(toolName)),
    maxContentChars: options.maxToolContentChars,
  });
  const ordering = new AfterToolCallSeen();
  const onStart = (event: ToolCallStartEvent) => ordering.run(event.toolCallId, () => reporter.started(event.toolCallId, event.toolName));
  const onEnd = (event: ToolCallEndEvent) =>
    ordering.run(event.toolCallId, () => reporter.ended(event.toolCallId, event.toolName, event.detail));
  const cancelled = () => signal?.aborted === true;

  session.on("tool-call-start", onStart);
  session.on("tool-call-end", onEnd);
  try {
    let turn: ReturnType<AcpPromptSession["send"]>;
    try {
      turn = session.send(messageFromPrompt(options.prompt), signal ? { signal } : {});
    } catch (error) {
      throw RequestError.internalError({ reason: errorText(error) }, errorText(error));
    }
    try {
      for await (const event of turn) {
        switch (event.type) {
          case "assistant":
            send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: event.text }, ...messageIdOf(event.messageId) });
            break;
          case "reasoning":
            send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: event.text }, ...messageIdOf(event.messageId) });
            break;
          case "tool-call":
            reporter.called(event.toolCallId, event.toolName, event.input);
            ordering.seen(event.toolCallId);
            break;
          case "tool-result":
            reporter.resulted(event.toolCallId, event.toolName, event.isError, event.text);
            break;
          case "error":
            if (!cancelled())
              send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n[error] ${event.message}\n` } });
            break;
          case "stop":
            break;
        }
      }
      const result = await turn.result;
      if (cancelled()) return { stopReason: "cancelled" };
      return { stopReason: acpStopReason(result) };
    } catch (error) {
      if (cancelled()) return { stopReason: "cancelled" };
      if (error instanceof RequestError) throw error;
      throw RequestError.internalError({ reason: errorText(error) }, errorText(error));
    }
  } finally {
    ordering.flushAll();
    reporter.finishOpen(cancelled() ? "Cancelled: the prompt was cancelled." : "The turn ended before this tool call finished.");
    session.off("tool-call-start", onStart);
    session.off("tool-call-end", onEnd);
  }
}

/**
 * The ACP stop reason of a finished turn. Letta's error stop reasons (`error`,
 * `llm_api_error`, ...) have no ACP equivalent: they reject the prompt with
 * the runtime's message.
 */
export function acpStopReason(result: Pick<TurnResult, "stopReason" | "error">): StopReason {
  switch (result.stopReason) {
    case "end_turn":
    case "no_tool_call":
    case "tool_rule":
    case "requires_approval":
      return "end_turn";
    case "cancelled":
      return "cancelled";
    case "max_tokens":
      return "max_tokens";
    case "max_steps":
    case "max_turn_requests":
      return "max_turn_requests";
    case "refusal":
      return "refusal";
    default: {
      const message = result.error ?? `the turn ended with stop reason "${result.stopReason}"`;
      throw RequestError.internalError({ stopReason: result.stopReason, reason: message }, message);
    }
  }
}

/** Holds actions for a tool call until the turn's `tool-call` for it was reported, or one macrotask passed. */
class AfterToolCallSeen {
  #seen = new Set<string>();
  #waiting = new Map<string, Array<() => void>>();

  run(toolCallId: string, action: () => void): void {
    if (this.#seen.has(toolCallId)) {
      action();
      return;
    }
    let actions = this.#waiting.get(toolCallId);
    if (actions === undefined) {
      actions = [];
      this.#waiting.set(toolCallId, actions);
      // One macrotask, not a delay: the turn's own event for the call comes in the same tick.
      setImmediate(() => this.#flush(toolCallId));
    }
    actions.push(action);
  }

  seen(toolCallId: string): void {
    this.#seen.add(toolCallId);
    this.#flush(toolCallId);
  }

  flushAll(): void {
    for (const toolCallId of [...this.#waiting.keys()]) this.#flush(toolCallId);
  }

  #flush(toolCallId: string): void {
    const actions = this.#waiting.get(toolCallId);
    if (actions === undefined) return;
    this.#waiting.delete(toolCallId);
    for (const action of actions) action();
  }
}

function messageIdOf(messageId: string | undefined): { messageId?: string | undefined } {
  return messageId === undefined ? {} : { messageId };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
