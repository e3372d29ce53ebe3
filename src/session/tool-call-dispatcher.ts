/**
 * Answers the `external_tool_call_request`s of the session's own runtime:
 * leaves other runtimes' requests alone, refuses unbounded identities and
 * scope-less requests with an error, builds the {@link CallKey} (the input's
 * digest included) and hands the call to the {@link CallTable}. What the table
 * writes or reports comes back through its one output callback; events are
 * built only when someone listens.
 */
import type { EventEmitter } from "eventemitter3";
import { CallTable, canonicalJson, inputDigest, type CallLimits, type CallRecord, type CallTableOutput } from "../calls/index.js";
import type { Timers } from "../internal/timers.js";
import type { SessionObserver } from "../observability/session-observer.js";
import type { ToolLookup } from "../tools/index.js";
import type { RuntimeLink } from "../transport/runtime-link.js";
import type { ExternalToolCallRequestFrame, ToolCallResponseBody } from "../wire/index.js";
import type { OwnRuntime } from "./own-runtime.js";
import type { SessionEvents } from "./session-events.js";

export interface ToolCallDispatcherOptions {
  link: RuntimeLink;
  /** The session's current tools (re-registered when a tool source changes). */
  registry(): ToolLookup;
  own: OwnRuntime;
  events: EventEmitter<SessionEvents>;
  timers: Timers;
  limits: Partial<CallLimits>;
  /** Told every call's life (its log lines and span). */
  observer: SessionObserver;
}

export class ToolCallDispatcher {
  readonly table: CallTable;
  #options: ToolCallDispatcherOptions;

  constructor(options: ToolCallDispatcherOptions) {
    this.#options = options;
    this.table = new CallTable({ limits: options.limits, timers: options.timers, output: this.#output });
  }

  handle(frame: ExternalToolCallRequestFrame): void {
    const { own, link, events } = this.#options;
    const { request_id: requestId, tool_call_id: toolCallId, tool_name: toolName } = frame;
    const verdict = own.classify(frame.runtime);
    if (verdict.kind === "foreign") {
      const { agent_id: agentId, conversation_id: conversationId } = verdict.scope;
      if (events.listenerCount("foreign-frame") > 0) events.emit("foreign-frame", { type: frame.type, requestId, agentId, conversationId });
      return;
    }
    const problem =
      this.#identityProblem(frame) ?? (verdict.kind === "unscoped" ? "it names no runtime and this session has none yet" : undefined);
    if (problem !== undefined || verdict.kind !== "mine") {
      this.#send(requestId, { error: `Refused tool call ${clip(toolCallId)} (${clip(toolName)}): ${problem}. Nothing was run.` });
      this.#options.observer.toolCallRefused(clip(requestId), clip(toolName), problem!);
      if (events.listenerCount("tool-call-refused") > 0)
        events.emit("tool-call-refused", { requestId: clip(requestId), toolName: clip(toolName), reason: problem! });
      return;
    }
    this.#options.observer.toolCallRequested(requestId, toolName, toolCallId, frame.input);
    const canonical = canonicalJson(frame.input);
    const registry = this.#options.registry();
    const disposition = this.table.request({
      requestId,
      epoch: link.epoch,
      key: {
        connectionId: link.connectionId,
        agentId: verdict.scope.agent_id,
        conversationId: verdict.scope.conversation_id,
        toolCallId,
        inputDigest: inputDigest(canonical),
      },
      toolName,
      tool: registry.get(toolName),
      toolNames: () => registry.names(),
      input: frame.input,
      inputBytes: Buffer.byteLength(canonical),
    });
    if (disposition === "started" || disposition === "busy") return;
    const event =
      disposition === "reused"
        ? "tool-call-reused"
        : disposition === "conflict" || disposition === "closed"
          ? "tool-call-refused"
          : "tool-call-duplicate";
    if (events.listenerCount(event) === 0) return;
    if (event === "tool-call-refused")
      events.emit(event, {
        requestId,
        toolName,
        reason: disposition === "closed" ? "the session is closed" : "the request id already stands for another call",
      });
    else if (event === "tool-call-reused") events.emit(event, { requestId, toolName, toolCallId });
    else events.emit(event, { requestId, toolName, toolCallId, disposition: disposition as "joined" });
  }

  /** Why a frame's ids are refused unread, or `undefined`. */
  #identityProblem(frame: ExternalToolCallRequestFrame): string | undefined {
    const limits = this.table.limits;
    if (frame.request_id.length > limits.maxRequestIdChars) return `its request_id is longer than ${limits.maxRequestIdChars} characters`;
    if (frame.tool_call_id.length > limits.maxToolCallIdChars)
      return `its tool_call_id is longer than ${limits.maxToolCallIdChars} characters`;
    if (frame.tool_name.length > limits.maxToolNameChars) return `its tool_name is longer than ${limits.maxToolNameChars} characters`;
    return undefined;
  }

  #send(requestId: string, body: ToolCallResponseBody): number | undefined {
    const link = this.#options.link;
    return link.send({ type: "external_tool_call_response", request_id: requestId, ...body }, true) ? link.epoch : undefined;
  }

  /** The table's one way out: responses go to the link, reports become session events. */
  #output: CallTableOutput = (kind, record, requestId, detail) => {
    if (kind === "response") return this.#send(requestId, detail as ToolCallResponseBody);
    if (record !== undefined) this.#options.observer.toolCall(kind, record, requestId, detail);
    const events = this.#options.events;
    const name = EVENT_OF_KIND[kind];
    if (record === undefined || events.listenerCount(name) === 0) return undefined;
    const { toolName, key } = record;
    const ids = { toolName, toolCallId: key.toolCallId };
    if (kind === "start") events.emit("tool-call-start", { ...ids, requestId, agentId: key.agentId, conversationId: key.conversationId });
    else if (kind === "end") events.emit("tool-call-end", endEvent(record));
    else if (kind === "late") events.emit("tool-call-late", { ...ids, outcome: (detail as { kind: "ok" }).kind });
    else events.emit("tool-call-progress", { ...ids, message: detail as string });
    return undefined;
  };
}

const EVENT_OF_KIND = { start: "tool-call-start", end: "tool-call-end", late: "tool-call-late", progress: "tool-call-progress" } as const;

function endEvent(record: CallRecord) {
  const { key, outcome } = record;
  return {
    toolName: record.toolName,
    toolCallId: key.toolCallId,
    agentId: key.agentId,
    conversationId: key.conversationId,
    requestIds: record.deliveries.map((delivery) => delivery.requestId),
    outcome: outcome!.kind,
    detail: outcome!,
    durationMs: record.settledAt - record.startedAt,
  };
}

/** An id as it may appear in an answer or event: at most 128 characters. */
function clip(id: string): string {
  return id.length <= 128 ? id : `${id.slice(0, 128)}…`;
}
