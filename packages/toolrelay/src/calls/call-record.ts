/**
 * One tool call, from request to response: the only record of it, owned by the
 * {@link CallTable} (call-table.ts) and kept in its {@link CallStore}.
 *
 * ```text
 *  call:   running ──settle──▶ settled ──evicted (count, chars, age)──▶ forgotten ──evicted (count, age)──▶ gone
 *          (running: checked, then `approving` while a `needsApproval` call waits for its answer
 *          — deadline `approvalTimeoutMs` — then executing — deadline `timeoutMs`, or what is left
 *          of the runtime's 300 s for an approved call)
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
import { idempotencyKeyOf, type CallKey } from "./call-key.js";
import type { CallOutcome } from "./call-outcome.js";

export type CallState = "running" | "settled" | "forgotten" | "gone";
export type DeliveryState = "waiting" | "held" | "sent" | "dropped";

/** One request id of a call: `epoch` is the one it arrived on, once `sent` the one it was written on, at `sentAt` (table time). */
export interface Delivery {
  readonly requestId: string;
  state: DeliveryState;
  epoch: number;
  sentAt: number;
}

/** A call is its own {@link CallKey} (the key's fields are the record's: no second object per call). */
export class CallRecord implements CallKey {
  readonly connectionId: string;
  readonly agentId: string;
  readonly conversationId: string;
  readonly toolCallId: string;
  readonly inputDigest: string;
  /** The session's turn the call arrived in (`""` between turns). */
  readonly turn: string;
  state: CallState = "running";
  outcome: CallOutcome | undefined;
  /** Built once at settlement; every delivery writes this very object. Cleared when forgotten. */
  response: ToolCallResponseBody | undefined;
  /** Text and image characters of `response` (the cache's size measure). */
  responseChars = 0;
  settledAt = 0;
  /** Request ids of this call, oldest first. */
  readonly deliveries: Delivery[];
  /** The record before it under the same tool call id (another scope or input). */
  older: CallRecord | undefined;
  /** Undefined for an unknown tool; released at settlement. */
  tool: ClientTool | undefined;
  /** Waiting for the app's approval (`needsApproval`): running, but its callback has not started. */
  approving = false;
  /** Table time its current deadline counts from: `startedAt`, then the approval's start, then its run's. */
  deadlineFrom: number;
  /** Its current deadline (ms from `deadlineFrom`): `timeoutMs`, the approval timeout while approving, then what is left of the runtime's wait. */
  deadlineMs: number;
  /** Which {@link RecordQueue} entry is the record's current one (an entry with another stamp is stale). */
  queueStamp = 0;
  /**
   * With a call journal: whether this table owns the call's journal record (`true` once its
   * `start` was written, or for a re-run of an idempotent call the journal says started), or
   * `false` (the journal already held the call): its settlement is written only when owned.
   * Undefined until the table asked the journal to record it.
   */
  journalClaim: Promise<boolean> | undefined;
  /** The callback's AbortController once the tool reads its signal; until then the abort reason, if any. */
  #abort: unknown;
  /** The request id the call arrived with (the key's seed; `deliveries` may let it go), then the key once computed. */
  #idempotencySeed: string;
  #idempotencyKey: string | undefined;

  constructor(
    key: CallKey,
    readonly toolName: string,
    tool: ClientTool | undefined,
    readonly startedAt: number,
    readonly timeoutMs: number,
    first: Delivery,
    turn = "",
  ) {
    this.connectionId = key.connectionId;
    this.agentId = key.agentId;
    this.conversationId = key.conversationId;
    this.toolCallId = key.toolCallId;
    this.inputDigest = key.inputDigest;
    this.turn = turn;
    this.tool = tool;
    this.deliveries = [first];
    this.#idempotencySeed = first.requestId;
    this.deadlineFrom = startedAt;
    this.deadlineMs = timeoutMs;
  }

  /** The callback's signal (already aborted if the call was). */
  get signal(): AbortSignal {
    if (this.#abort instanceof AbortController) return this.#abort.signal;
    const controller = new AbortController();
    if (this.#abort !== undefined) controller.abort(this.#abort);
    this.#abort = controller;
    return controller.signal;
  }

  /** Abort the callback's signal with `reason` (now, or when the tool first reads it). */
  abort(reason: unknown): void {
    if (this.#abort instanceof AbortController) this.#abort.abort(reason);
    else this.#abort = reason;
  }

  /** The call's idempotency key (`idempotencyKeyOf`), computed when first read. */
  get idempotencyKey(): string {
    this.#idempotencyKey ??= idempotencyKeyOf(this.agentId, this.conversationId, this.toolCallId, this.#idempotencySeed);
    return this.#idempotencyKey;
  }

  /** The key of a request id of this call (the call journal's alias of a re-attempt). */
  keyOfRequest(requestId: string): string {
    return idempotencyKeyOf(this.agentId, this.conversationId, this.toolCallId, requestId);
  }

  /** The call journal found this call under another key (it first arrived with another request id): that key is the call's. */
  adoptIdempotencyKey(key: string): void {
    this.#idempotencyKey = key;
  }

  delivery(requestId: string): Delivery | undefined {
    return this.deliveries.find((delivery) => delivery.requestId === requestId);
  }

  /**
   * Whether a request under a **new** request id (same key) is this call again rather than a new
   * model request that reused the tool call id (providers number every call `call_0`):
   * - while the runtime still waits for this call's answer (a request id of it is waiting or
   *   held), it is this call (the runtime asks once per model call; a second ask is a re-attempt);
   * - once answered, only within the same turn and after a reconnect (an answer written on an
   *   older epoch): the runtime re-running a call whose answer it lost;
   * - otherwise it is a new model request, and it runs.
   */
  isAskedAgainBy(turn: string, epoch: number): boolean {
    let answeredBefore = false;
    for (const delivery of this.deliveries) {
      if (delivery.state === "waiting" || delivery.state === "held") return true;
      if (delivery.epoch < epoch) answeredBefore = true;
    }
    return answeredBefore && turn === this.turn;
  }
}

/**
 * What a tool's `execute` gets beside its input. `signal` is a getter on the prototype, so the
 * AbortController is made only when the tool reads it (`({ signal }) =>` works; a spread copies the
 * ids and `progress`, not the signal).
 */
export class CallContext implements ToolCallContext {
  readonly toolCallId: string;
  readonly agentId: string;
  readonly conversationId: string;
  readonly progress: (message: string) => void;
  #record: CallRecord;

  constructor(record: CallRecord, progress: (record: CallRecord, message: string) => void) {
    this.#record = record;
    this.toolCallId = record.toolCallId;
    this.agentId = record.agentId;
    this.conversationId = record.conversationId;
    this.progress = (message) => progress(record, String(message));
  }

  get signal(): AbortSignal {
    return this.#record.signal;
  }

  get idempotencyKey(): string {
    return this.#record.idempotencyKey;
  }
}

let lastStamp = 0;

/**
 * Records in the order they entered `state`; those that left it are skipped (amortized O(1)), and
 * so is an entry left behind when its record was pushed again (to another queue, or later to this
 * one: a call that waited for approval is queued again when it starts).
 */
export class RecordQueue {
  #items: CallRecord[] = [];
  #stamps: number[] = [];
  #head = 0;

  constructor(readonly state: CallState) {}

  push(record: CallRecord): void {
    record.queueStamp = ++lastStamp;
    this.#items.push(record);
    this.#stamps.push(record.queueStamp);
  }

  /** The oldest record still in the state. */
  peek(): CallRecord | undefined {
    while (this.#head < this.#items.length && !this.#live(this.#head)) this.#head++;
    if (this.#head > 1_024 && this.#head * 2 > this.#items.length) {
      this.#items.splice(0, this.#head);
      this.#stamps.splice(0, this.#head);
      this.#head = 0;
    }
    return this.#items[this.#head];
  }

  /** Every record still in the state, oldest first (a snapshot). */
  live(): CallRecord[] {
    const records: CallRecord[] = [];
    for (let index = this.#head; index < this.#items.length; index++) if (this.#live(index)) records.push(this.#items[index]!);
    return records;
  }

  #live(index: number): boolean {
    const record = this.#items[index]!;
    return record.state === this.state && record.queueStamp === this.#stamps[index];
  }
}
