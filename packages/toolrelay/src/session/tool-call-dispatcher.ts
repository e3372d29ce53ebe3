/**
 * Answers the `external_tool_call_request`s of the session's own runtime: leaves other runtimes'
 * requests alone, refuses unbounded identities and scope-less requests with an error, builds the
 * {@link CallKey} (the input's digest included) and hands the call to the {@link CallTable}. The
 * table's one output comes back here: responses go to the link, reports to the observer and to
 * session events (built only when someone listens). It remembers the response last written for each
 * recent tool call ({@link ToolCallDispatcher.sentResponse}), so that a turn's `tool-result` event can
 * report what the SDK sent the model rather than the runtime's cut copy of it.
 */
import type { EventEmitter } from "eventemitter3";
import { canonicalJson } from "../internal/canonical-json.js";
import { CallTable, inputDigest, type CallLimits, type CallRecord, type CallTableOptions, type CallTableOutput } from "../calls/index.js";
import type { Timers } from "../internal/timers.js";
import type { SessionObserver } from "../observability/session-observer.js";
import type { ToolLookup } from "../tools/index.js";
import type { RuntimeLink } from "../transport/runtime-link.js";
import type { ExternalToolCallRequestFrame, ToolCallResponseBody } from "../wire/index.js";
import type { OwnRuntime } from "./own-runtime.js";
import { toolCallEndEvent, type SessionEvents } from "./session-events.js";

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
  /** The running turn's client message id (`""` between turns): part of what tells a re-asked call from a new one. */
  turn(): string;
  /** A call ended `ok`: its output (before the table lets it go), for the turn's result. */
  onOutput?: ((record: CallRecord, output: unknown) => void) | undefined;
  /** Asked about every call whose tool's `needsApproval` says so (see `CallTableOptions.approve`). */
  approve?: CallTableOptions["approve"];
  /** Where calls are recorded (see `CallTableOptions.journal`). */
  journal?: CallTableOptions["journal"];
}

/** How many tool calls (and request ids) the dispatcher remembers the written response of. */
const REMEMBERED_CALLS = 256;

export class ToolCallDispatcher {
  readonly table: CallTable;
  #options: ToolCallDispatcherOptions;
  /** tool_call_id → the response last written for it; `undefined` while its newest request is unanswered. Bounded. */
  #sent = new Map<string, ToolCallResponseBody | undefined>();
  /** request_id → its tool_call_id (a response names only its request). Bounded. */
  #callOfRequest = new Map<string, string>();

  constructor(options: ToolCallDispatcherOptions) {
    this.#options = options;
    this.table = new CallTable({
      limits: options.limits,
      timers: options.timers,
      output: this.#output,
      approve: options.approve,
      journal: options.journal,
    });
  }

  /**
   * The response last written to the runtime for `toolCallId` (a call of this session's runtime),
   * or `undefined`: none was written since its newest request (a provider may reuse `call_0` in
   * every turn), or the call is too old to be remembered. Read-only.
   */
  sentResponse(toolCallId: string): ToolCallResponseBody | undefined {
    return this.#sent.get(toolCallId);
  }

  handle(frame: ExternalToolCallRequestFrame): void {
    const { own, link } = this.#options;
    const { request_id: requestId, tool_call_id: toolCallId, tool_name: toolName } = frame;
    const verdict = own.classify(frame.runtime);
    if (verdict.kind === "foreign") {
      const { agent_id: agentId, conversation_id: conversationId } = verdict.scope;
      return void this.#emit("foreign-frame", () => ({ type: frame.type, requestId, agentId, conversationId }));
    }
    const { maxRequestIdChars, maxToolCallIdChars, maxToolNameChars } = this.table.limits;
    const problem =
      tooLong("request_id", requestId, maxRequestIdChars) ??
      tooLong("tool_call_id", toolCallId, maxToolCallIdChars) ??
      tooLong("tool_name", toolName, maxToolNameChars) ??
      (verdict.kind === "mine" ? undefined : "it names no runtime and this session has none yet");
    if (problem !== undefined || verdict.kind !== "mine") {
      this.#send(requestId, { error: `Refused tool call ${clip(toolCallId)} (${clip(toolName)}): ${problem}. Nothing was run.` });
      return void this.#refused(clip(requestId), clip(toolName), problem!);
    }
    this.#options.observer.toolCallRequested(requestId, toolName, toolCallId, frame.input);
    remember(this.#callOfRequest, requestId, toolCallId);
    remember(this.#sent, toolCallId, undefined);
    const { agent_id: agentId, conversation_id: conversationId } = verdict.scope;
    const canonical = canonicalJson(frame.input);
    const registry = this.#options.registry();
    const disposition = this.table.request({
      requestId,
      epoch: link.epoch,
      turn: this.#options.turn(),
      connectionId: link.connectionId,
      agentId,
      conversationId,
      toolCallId,
      inputDigest: inputDigest(canonical),
      toolName,
      tool: registry.get(toolName),
      tools: registry,
      input: frame.input,
      inputBytes: Buffer.byteLength(canonical),
    });
    if (disposition === "started" || disposition === "busy") return;
    if (disposition === "closed") this.#refused(requestId, toolName, "the session is closed");
    else if (disposition === "conflict") this.#refused(requestId, toolName, "the request id already stands for another call");
    else if (disposition === "reused") this.#emit("tool-call-reused", () => ({ requestId, toolName, toolCallId }));
    else this.#emit("tool-call-duplicate", () => ({ requestId, toolName, toolCallId, disposition }));
  }

  /** A request answered with an error and not run. */
  #refused(requestId: string, toolName: string, reason: string): void {
    this.#options.observer.toolCallRefused(requestId, toolName, reason);
    this.#emit("tool-call-refused", () => ({ requestId, toolName, reason }));
  }

  #send(requestId: string, body: ToolCallResponseBody): number | undefined {
    const link = this.#options.link;
    return link.send({ type: "external_tool_call_response", request_id: requestId, ...body }, true) ? link.epoch : undefined;
  }

  /** A session event, its payload built only when someone listens. */
  #emit<Name extends keyof SessionEvents>(name: Name, payload: () => SessionEvents[Name][0]): void {
    const { events } = this.#options;
    if (events.listenerCount(name) > 0) (events.emit as (name: Name, event: unknown) => boolean)(name, payload());
  }

  /** The table's one way out: responses go to the link, reports to the observer and session events (built only when someone listens). */
  #output: CallTableOutput = {
    response: (_record, requestId, body) => {
      const epoch = this.#send(requestId, body);
      const toolCallId = this.#callOfRequest.get(requestId);
      if (epoch !== undefined && toolCallId !== undefined) remember(this.#sent, toolCallId, body);
      return epoch;
    },
    start: (record, requestId) => {
      const { observer, events } = this.#options;
      observer.toolCallStarted(record, requestId);
      if (events.listenerCount("tool-call-start") === 0) return;
      const { toolName, toolCallId, agentId, conversationId } = record;
      events.emit("tool-call-start", { toolName, toolCallId, requestId, agentId, conversationId });
    },
    end: (record) => {
      const { observer, events } = this.#options;
      observer.toolCallEnded(record, this.table.origin);
      const outcome = record.outcome!;
      if (outcome.kind === "ok") this.#options.onOutput?.(record, outcome.output);
      if (events.listenerCount("tool-call-end") > 0) events.emit("tool-call-end", toolCallEndEvent(record) as never);
    },
    late: (record, _requestId, outcome) => {
      const { observer, events } = this.#options;
      observer.toolCallLate(record, outcome);
      if (events.listenerCount("tool-call-late") === 0) return;
      events.emit("tool-call-late", { toolName: record.toolName, toolCallId: record.toolCallId, outcome: outcome.kind });
    },
    progress: (record, _requestId, message) => {
      const { observer, events } = this.#options;
      observer.toolCallProgress(record, message);
      if (events.listenerCount("tool-call-progress") === 0) return;
      events.emit("tool-call-progress", { toolName: record.toolName, toolCallId: record.toolCallId, message });
    },
  };
}

/** Set `key` as the newest entry of a map bounded to {@link REMEMBERED_CALLS} (the oldest goes). */
function remember<Value>(map: Map<string, Value>, key: string, value: Value): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > REMEMBERED_CALLS) map.delete(map.keys().next().value as string);
}

function tooLong(field: string, value: string, limit: number): string | undefined {
  return value.length > limit ? `its ${field} is longer than ${limit} characters` : undefined;
}

/** An id as it may appear in an answer or event: at most 128 characters. */
function clip(id: string): string {
  return id.length <= 128 ? id : `${id.slice(0, 128)}…`;
}
