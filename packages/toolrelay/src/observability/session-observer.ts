/**
 * What a session tells its log and its tracer, at a few points: the session opened or closed,
 * the link changed state, a turn started and ended, a tool call started and ended (through the
 * call table's one output callback), an error was reported. One object per session; the session
 * never logs or traces anywhere else.
 *
 * Lines and spans carry ids, tool names, outcomes, durations and counts. A prompt, a tool input
 * or a tool result goes into a (debug) line only with `logPayloads`, and never into a span.
 */
import type { CallOutcome, CallRecord } from "../calls/index.js";
import type { Timers } from "../internal/timers.js";
import type { LogFields, SessionLog } from "./logger.js";
import type { OpenSpan, SessionTracing } from "./telemetry.js";

/** The ids of the session's runtime (empty strings until it is registered). */
export interface ObservedScope {
  agentId: string;
  conversationId: string;
  connectionId: string;
}

/** How a turn ended, as its `result` settles. */
interface TurnEnding {
  stopReason: string;
  error?: string | undefined;
}

export interface SessionObserverOptions {
  log: SessionLog;
  tracing: SessionTracing;
  timers: Timers;
  /** Put prompts, tool inputs and tool results into debug lines. */
  logPayloads: boolean;
  scope(): ObservedScope;
}

interface ObservedTurn {
  readonly span: OpenSpan | undefined;
  readonly startedAt: number;
  toolCalls: number;
}

export class SessionObserver {
  readonly #options: SessionObserverOptions;
  #turn: ObservedTurn | undefined;
  /** The turn span each running call belongs to (the turn running when it started). */
  readonly #callParents = new WeakMap<CallRecord, ObservedTurn>();

  constructor(options: SessionObserverOptions) {
    this.#options = options;
  }

  sessionOpened(backend: string): void {
    this.#options.log.write("info", "session", "session open", { backend, ...this.#ids() });
  }

  sessionClosed(pendingToolCalls: number): void {
    this.#options.log.write("info", "session", "session close", { pendingToolCalls, ...this.#ids() });
  }

  linkState(state: string, previous: string): void {
    const level = state === "reconnecting" || (state === "closed" && previous !== "closed") ? "info" : "debug";
    this.#options.log.write(level, "link", "link state", { state, previous, connectionId: this.#options.scope().connectionId });
  }

  /** An `error` event of the session (a transport problem, a listener that threw, ...). */
  error(error: { code?: string | undefined; message: string }): void {
    this.#options.log.write("warn", "session", "session error", { code: error.code, error: error.message });
  }

  /** A turn was sent; its end is observed through `result`. */
  turnStarted(
    result: Promise<TurnEnding>,
    message: string | ReadonlyArray<{ type: string; text?: string | undefined }>,
    clientMessageId: string,
  ): void {
    const { log, tracing, timers, logPayloads } = this.#options;
    const ids = this.#ids();
    const span = tracing.start("toolrelay.turn", spanIds(ids));
    const turn: ObservedTurn = { span, startedAt: timers.now(), toolCalls: 0 };
    this.#turn = turn;
    const fields: LogFields = { clientMessageId, ...ids };
    if (logPayloads) fields.prompt = typeof message === "string" ? message : message.map((part) => part.text ?? `[${part.type}]`).join("");
    log.write("info", "turn", "turn start", fields);
    result.then(
      (ending) => this.#turnEnded(turn, ending.stopReason, ending.error === undefined ? undefined : "the turn ended in an error"),
      (error: { code?: string | undefined; message?: string | undefined }) =>
        this.#turnEnded(turn, "failed", error?.code ?? "failed", error?.message),
    );
  }

  #turnEnded(turn: ObservedTurn, stopReason: string, failure: string | undefined, reason?: string): void {
    if (this.#turn === turn) this.#turn = undefined;
    const durationMs = this.#options.timers.now() - turn.startedAt;
    const ids = this.#ids();
    const failed = stopReason === "failed";
    this.#options.log.write(failed ? "warn" : "info", "turn", failed ? "turn failed" : "turn end", {
      stopReason,
      ...(failed ? { code: failure, error: reason } : {}),
      toolCalls: turn.toolCalls,
      durationMs,
      ...ids,
    });
    this.#options.tracing.end(
      turn.span,
      { "toolrelay.turn.stop_reason": stopReason, "toolrelay.turn.tool_calls": turn.toolCalls, "toolrelay.duration_ms": durationMs },
      stopReason === "error" || failed ? (failure ?? stopReason) : undefined,
    );
  }

  /** A tool call request arrived (its input is logged only with `logPayloads`). */
  toolCallRequested(requestId: string, toolName: string, toolCallId: string, input: unknown): void {
    const { log, logPayloads } = this.#options;
    if (!log.enabled("tool")) return;
    const fields: LogFields = { toolName, toolCallId, requestId };
    if (logPayloads) fields.input = safeJson(input);
    log.write("debug", "tool", "tool call request", fields);
  }

  /** A request answered with an error and not run. */
  toolCallRefused(requestId: string, toolName: string, reason: string): void {
    this.#options.log.write("warn", "tool", "tool call refused", { toolName, requestId, reason });
  }

  // What the call table reports (its output, responses excepted). Nothing is built for a log or tracer that is off.

  /** A call's callback is about to run. */
  toolCallStarted(record: CallRecord, requestId: string): void {
    const { log } = this.#options;
    if (this.#turn !== undefined) this.#callParents.set(record, this.#turn);
    if (log.enabled("tool"))
      log.write("info", "tool", "tool call start", { toolName: record.toolName, toolCallId: record.toolCallId, requestId });
  }

  /** A callback's outcome after its call had settled. */
  toolCallLate(record: CallRecord, outcome: CallOutcome): void {
    const { log } = this.#options;
    if (log.enabled("tool"))
      log.write("warn", "tool", "tool call late", { toolName: record.toolName, toolCallId: record.toolCallId, outcome: outcome.kind });
  }

  /** A callback's progress message (logged only with `logPayloads`). */
  toolCallProgress(record: CallRecord, message: string): void {
    const { log, logPayloads } = this.#options;
    if (!log.enabled("tool")) return;
    const ids = { toolName: record.toolName, toolCallId: record.toolCallId };
    log.write("debug", "tool", "tool call progress", logPayloads ? { ...ids, message } : ids);
  }

  /** A call settled; `origin`: the clock reading the record's times count from. */
  toolCallEnded(record: CallRecord, origin: number): void {
    const { log, tracing, logPayloads } = this.#options;
    const turn = this.#callParents.get(record) ?? this.#turn;
    if (turn !== undefined) turn.toolCalls++;
    const logged = log.enabled("tool");
    if (!logged && !tracing.enabled) return;
    const outcome = record.outcome!;
    const durationMs = record.settledAt - record.startedAt;
    const requestIds = () => record.deliveries.map((delivery) => delivery.requestId);
    if (logged) {
      const fields: LogFields = {
        toolName: record.toolName,
        toolCallId: record.toolCallId,
        outcome: outcome.kind,
        durationMs,
        requestIds: requestIds(),
      };
      if (outcome.kind !== "ok") fields.reason = outcomeReason(outcome);
      if (logPayloads && "content" in outcome) fields.result = safeJson(outcome.content);
      log.write(outcome.kind === "ok" ? "info" : "warn", "tool", "tool call end", fields);
    }
    if (!tracing.enabled) return;
    const attributes = {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": record.toolName,
      "gen_ai.tool.call.id": record.toolCallId,
      "toolrelay.agent.id": record.agentId,
      "toolrelay.conversation.id": record.conversationId,
      "toolrelay.connection.id": record.connectionId,
    };
    tracing.leaf(`execute_tool ${record.toolName}`, attributes, turn?.span, origin + record.startedAt, () => ({
      attributes: {
        "toolrelay.tool_call.outcome": outcome.kind,
        "toolrelay.request.ids": requestIds(),
        "toolrelay.duration_ms": durationMs,
      },
      failure: outcome.kind === "ok" ? undefined : outcome.kind,
      endTime: origin + record.settledAt,
    }));
  }

  #ids(): ObservedScope {
    return this.#options.scope();
  }
}

function spanIds(ids: ObservedScope): Record<string, string> {
  return {
    "toolrelay.agent.id": ids.agentId,
    "toolrelay.conversation.id": ids.conversationId,
    "toolrelay.connection.id": ids.connectionId,
  };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return "[not JSON]";
  }
}

/**
 * Why a call did not end `ok`, in words, for its log line: the tool's error message, the input's
 * problems, the limit it hit. (Its result stays out of the log unless `logPayloads`.)
 */
export function outcomeReason(outcome: CallOutcome): string {
  switch (outcome.kind) {
    case "ok":
      return "";
    case "tool-error":
      return outcome.message;
    case "invalid-input":
      return outcome.issues.map((issue) => `${issue.path || "(input)"}: ${issue.message}`).join("; ");
    case "unknown-tool":
      return `no client tool named ${outcome.toolName}`;
    case "input-too-large":
      return `input of ${outcome.bytes} bytes, over the limit of ${outcome.limit}`;
    case "timeout":
      return `timed out after ${outcome.timeoutMs} ms`;
    case "cancelled":
      return outcome.reason;
    case "disconnected":
      return `the link was lost and not back within ${outcome.graceMs} ms`;
    case "busy":
      return `already running ${outcome.limit} calls`;
    case "denied":
      return outcome.message === "" ? `not approved (${outcome.reason})` : `not approved (${outcome.reason}): ${outcome.message}`;
    case "recorded":
      return "answered from the call journal (it ran before)";
    case "outcome-unknown":
      return outcome.reason === "started" ? "the journal says it started before and never settled" : "its journal record expired";
    case "journal-failed":
      return `the call journal failed: ${outcome.message}`;
  }
}
