/**
 * One tool call, from request to response: the only record of it, owned by the
 * {@link CallTable} (call-table.ts).
 *
 * ```text
 *  call:     running ──settle──▶ settled ──evicted (count, chars, age)──▶ forgotten ──evicted (count, age)──▶ gone
 *
 *  each request id of the call (a delivery), tagged with a connection epoch:
 *            waiting ──settled, written──────────────▶ sent(e)
 *            waiting ──settled, link down────▶ held ──new epoch, runtime kept it──▶ sent(e')
 *            waiting | held ──new epoch, runtime forgot it (local) / close──▶ dropped
 *            sent(e) ──the same request id re-offered on epoch e' > e──▶ sent(e')   (the cached answer again)
 * ```
 *
 * A settled call keeps its response (replayed byte for byte to a duplicate); a
 * forgotten one keeps only its request ids (a duplicate gets "outcome
 * unknown", never a second run). At most one response per request id per epoch.
 */
import type { ClientTool } from "../tools/index.js";
import type { ToolCallResponseBody } from "../wire/index.js";
import type { CallKey } from "./call-key.js";
import type { CallOutcome } from "./call-outcome.js";

/** What happened to the response for one request id. */
export type DeliveryState = "waiting" | "held" | "sent" | "dropped";

/** One request id of a call. */
export interface Delivery {
  readonly requestId: string;
  state: DeliveryState;
  /** The epoch it arrived on; once `sent`, the epoch it was written on. */
  epoch: number;
  /** When it was last written (`Timers.now()`), for the re-send after a reconnect. */
  sentAt: number;
}

/** The life stage of a call (see the diagram above). */
export type CallState = "running" | "settled" | "forgotten" | "gone";

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
  /** The record for the same tool call id with another input (the provider reused the id), newest first. */
  older: CallRecord | undefined;
  /** The callback's signal, created only when the tool reads it. */
  controller: AbortController | undefined;
  /** Set when the call was aborted before the tool read its signal. */
  abortReason: unknown;

  constructor(
    readonly key: CallKey,
    readonly slotId: string,
    readonly toolName: string,
    /** Undefined for an unknown tool; released at settlement. */
    public tool: ClientTool | undefined,
    readonly startedAt: number,
    readonly timeoutMs: number,
    first: Delivery,
  ) {
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
    for (const delivery of this.deliveries) if (delivery.requestId === requestId) return delivery;
    return undefined;
  }
}
