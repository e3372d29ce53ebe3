import type { EventEmitter } from "eventemitter3";
import { CallTable, type CallKey, type CallOutcome } from "../calls/index.js";
import { ToolrelayError } from "../errors.js";
import type { Timers } from "../internal/timers.js";
import { executeTool, prepareToolCall, type ToolLookup } from "../tools/index.js";
import type { RuntimeLink } from "../transport/runtime-link.js";
import type { ExternalToolCallRequestFrame, RuntimeScope } from "../wire/index.js";
import { scopeOf } from "./runtime-scope-of.js";
import type { SessionEvents } from "./session-events.js";

export interface ToolCallDispatcherOptions {
  link: RuntimeLink;
  registry: ToolLookup;
  events: EventEmitter<SessionEvents>;
  timers: Timers;
  /** The session's runtime, used when a request names none. */
  runtime(): RuntimeScope | undefined;
  toolTimeoutMs: number;
  maxInputBytes: number;
  maxResultChars: number;
  reconnectGraceMs: number;
  replayCache: { maxEntries?: number; maxAgeMs?: number } | undefined;
}

/**
 * Answers `external_tool_call_request`s: builds the CallKey, hands the call to
 * the pending-call table (single flight, replay cache, deadline, settlement)
 * and writes each response frame.
 */
export class ToolCallDispatcher {
  readonly table: CallTable;
  #options: ToolCallDispatcherOptions;

  constructor(options: ToolCallDispatcherOptions) {
    this.#options = options;
    const { link, events } = options;
    this.table = new CallTable({
      timers: options.timers,
      replay: options.replayCache,
      reconnectGraceMs: options.reconnectGraceMs,
      deliver: (requestId, response) => link.send({ type: "external_tool_call_response", request_id: requestId, ...response }),
      onSettled: (event) => {
        events.emit("tool-call-end", {
          toolName: event.toolName,
          toolCallId: event.key.toolCallId,
          agentId: event.key.agentId,
          conversationId: event.key.conversationId,
          requestIds: event.requestIds,
          outcome: event.outcome.kind,
          detail: event.outcome,
          durationMs: event.durationMs,
        });
      },
      onCallbackError: (error) =>
        events.emit("error", new ToolrelayError("LISTENER_FAILED", "a tool-call event callback threw", { cause: error })),
      onLate: (event) => {
        events.emit("tool-call-late", { toolName: event.toolName, toolCallId: event.key.toolCallId, outcome: event.outcome.kind });
      },
    });
  }

  handle(frame: ExternalToolCallRequestFrame): void {
    const { registry, events } = this.#options;
    const runtime = scopeOf(frame.runtime) ?? this.#options.runtime();
    if (runtime === undefined) return;
    const key: CallKey = {
      connectionId: this.#options.link.connectionId,
      agentId: runtime.agent_id,
      conversationId: runtime.conversation_id,
      toolCallId: frame.tool_call_id,
    };
    const tool = registry.get(frame.tool_name);
    const disposition = this.table.request({
      requestId: frame.request_id,
      key,
      toolName: frame.tool_name,
      timeoutMs: tool?.timeoutMs ?? this.#options.toolTimeoutMs,
      annotations: tool?.annotations,
      run: (signal) => this.#run(frame, key, signal),
    });
    if (disposition !== "started") {
      events.emit("tool-call-duplicate", {
        toolName: frame.tool_name,
        toolCallId: frame.tool_call_id,
        requestId: frame.request_id,
        disposition,
      });
    }
  }

  async #run(frame: ExternalToolCallRequestFrame, key: CallKey, signal: AbortSignal): Promise<CallOutcome> {
    const prepared = await prepareToolCall(
      this.#options.registry,
      { toolName: frame.tool_name, input: frame.input },
      { maxInputBytes: this.#options.maxInputBytes },
    );
    if (!prepared.ok) return prepared.outcome;
    this.#options.events.emit("tool-call-start", {
      toolName: frame.tool_name,
      toolCallId: key.toolCallId,
      requestId: frame.request_id,
      agentId: key.agentId,
      conversationId: key.conversationId,
    });
    return executeTool(
      prepared.tool,
      prepared.input,
      {
        signal,
        toolCallId: key.toolCallId,
        agentId: key.agentId,
        conversationId: key.conversationId,
        progress: (message) =>
          this.#options.events.emit("tool-call-progress", { toolName: frame.tool_name, toolCallId: key.toolCallId, message: String(message) }),
      },
      { maxResultChars: this.#options.maxResultChars },
    );
  }
}
