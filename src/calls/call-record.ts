/**
 * One tool call, from request to response: the only record of it, owned by the
 * {@link CallTable} (call-table.ts) and kept in its {@link CallStore}.
 *
 * ```text
 *  call:   running ──settle──▶ settled ──evicted (count, chars, age)──▶ forgotten ──evicted (count, age)──▶ gone
 *
 *  each request id of the call (a delivery), tagged with a connection epoch:
 *          waiting ──settled, written──────────────────────────────▶ sent(e)
 *          waiting ──settled, not written (link down)──▶ held ──written on a new epoch──▶ sent(e')
 *          waiting | held ──the runtime forgot the epoch (local reconnect) or close──▶ dropped
 *          sent(e) | dropped(e) ──the same request id asked on epoch e' > e──▶ sent(e') (the cached answer again)
 * ```
 *
 * A settled call keeps its response (replayed byte for byte to a duplicate); a
 * forgotten one keeps only its request ids (a duplicate gets "outcome unknown",
 * never a second run). At most one response per request id per epoch.
 */
import type { ClientTool, ToolCallContext } from "../tools/index.js";
import type { ToolCallResponseBody } from "../wire/index.js";
import type { CallKey } from "./call-key.js";
import type { CallOutcome } from "./call-outcome.js";

export type CallState = "running" | "settled" | "forgotten" | "gone";
export type DeliveryState = "waiting" | "held" | "sent" | "dropped";

/** One request id of a call. */
export interface Delivery {
  readonly requestId: string;
  state: DeliveryState;
  /** The epoch it arrived on; once `sent`, the epoch it was written on. */
  epoch: number;
  /** When it was last written (table time), for the re-send after a reconnect. */
  sentAt: number;
}

export class CallRecord {
  state: CallState = "running";
  outcome: CallOutcome | undefined;
  /** Built once at settlement; every delivery writes this very object. Cleared when forgotten. */
  response: ToolCallResponseBody | undefined;
  /** Text and image characters of `response` (the cache's size measure). */
  responseChars = 0;
  settledAt = 0;
  /** Request ids of this call, oldest first. */
  readonly deliveries: Delivery[];
  /** The record of the same tool call id with another input (a reused id), newest first. */
  older: CallRecord | undefined;
  /** The callback's signal, created only when the tool reads it. */
  controller: AbortController | undefined;
  /** The abort reason, when the call was aborted before the tool read its signal. */
  abortReason: unknown;

  readonly key: CallKey;
  readonly toolName: string;
  /** Undefined for an unknown tool; released at settlement. */
  tool: ClientTool | undefined;
  readonly startedAt: number;
  readonly timeoutMs: number;

  constructor(key: CallKey, toolName: string, tool: ClientTool | undefined, startedAt: number, timeoutMs: number, first: Delivery) {
    this.key = key;
    this.toolName = toolName;
    this.tool = tool;
    this.startedAt = startedAt;
    this.timeoutMs = timeoutMs;
    this.deliveries = [first];
  }

  /** The callback's signal (created on first use; already aborted if the call was). */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortReason !== undefined) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** Abort the callback's signal with `reason` (now, or when the tool first reads it). */
  abort(reason: unknown): void {
    if (this.controller === undefined) this.abortReason = reason;
    else this.controller.abort(reason);
  }

  delivery(requestId: string): Delivery | undefined {
    return this.deliveries.find((delivery) => delivery.requestId === requestId);
  }
}

/**
 * What a tool's `execute` gets beside its input. The ids and `progress` are own properties; `signal`
 * is a getter on the prototype, so the AbortController is created only when the tool reads it —
 * `({ signal }) =>` and `context.signal` work, a spread (`{ ...context }`) copies no signal.
 */
export class CallContext implements ToolCallContext {
  readonly toolCallId: string;
  readonly agentId: string;
  readonly conversationId: string;
  readonly progress: (message: string) => void;
  #record: CallRecord;

  constructor(record: CallRecord, progress: (record: CallRecord, message: string) => void) {
    this.#record = record;
    this.toolCallId = record.key.toolCallId;
    this.agentId = record.key.agentId;
    this.conversationId = record.key.conversationId;
    this.progress = (message) => progress(record, String(message));
  }

  get signal(): AbortSignal {
    return this.#record.signal;
  }
}
