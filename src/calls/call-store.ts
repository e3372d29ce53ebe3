/**
 * Where call records live and how they age: one map of records — by scope, then
 * by tool call id, a chain per tool call id with one record per distinct input —
 * an index by request id, and the bounds of the settled cache and of forgotten
 * calls (count, size, age — checked lazily: the store owns no timer). Part of
 * the call table.
 */
import type { ToolCallResponseBody } from "../wire/index.js";
import { callScopeId, type CallKey } from "./call-key.js";
import type { CallLimits } from "./call-table-options.js";
import type { CallRecord, Delivery, DeliveryState } from "./call-record.js";

/** Request ids remembered per call; past it the oldest is forgotten (a hostile peer cannot grow one call). */
export const MAX_REQUEST_IDS_PER_CALL = 64;
/** Records kept per tool call id (one per distinct input); past it the oldest settled ones are let go. */
export const MAX_INPUTS_PER_TOOL_CALL_ID = 8;

export class CallStore {
  #limits: CallLimits;
  /** scope id → tool call id → the newest record (older inputs follow `older`). */
  #scopes = new Map<string, Map<string, CallRecord>>();
  #lastScope: { key: CallKey; slots: Map<string, CallRecord> } | undefined;
  #byRequestId = new Map<string, CallRecord>();
  #settled = new RecordQueue("settled");
  #forgotten = new RecordQueue("forgotten");
  cachedCount = 0;
  forgottenCount = 0;
  #cachedChars = 0;
  #heldChars = 0;

  constructor(limits: CallLimits) {
    this.#limits = limits;
  }

  /** The records of a key's scope, by tool call id (the scope of the last request is kept at hand). */
  slotsOf(key: CallKey): Map<string, CallRecord> {
    const last = this.#lastScope;
    if (
      last !== undefined &&
      last.key.connectionId === key.connectionId &&
      last.key.agentId === key.agentId &&
      last.key.conversationId === key.conversationId
    ) {
      return last.slots;
    }
    const scope = callScopeId(key);
    let slots = this.#scopes.get(scope);
    if (slots === undefined) {
      slots = new Map();
      this.#scopes.set(scope, slots);
    }
    this.#lastScope = { key, slots };
    return slots;
  }

  /** The record a request id stands for. */
  ownerOf(requestId: string): CallRecord | undefined {
    return this.#byRequestId.get(requestId);
  }

  /** A new record becomes its slot's head; the slot keeps at most {@link MAX_INPUTS_PER_TOOL_CALL_ID}. */
  add(record: CallRecord, slots: Map<string, CallRecord>): void {
    record.older = slots.get(record.key.toolCallId);
    slots.set(record.key.toolCallId, record);
    this.#byRequestId.set(record.deliveries[0]!.requestId, record);
    let kept = record;
    for (let count = 1; kept.older !== undefined; count++, kept = kept.older) {
      if (count < MAX_INPUTS_PER_TOOL_CALL_ID || kept.older.state === "running") continue;
      for (let cut: CallRecord | undefined = kept.older; cut !== undefined; cut = cut.older) this.#unindex(cut);
      kept.older = undefined;
      break;
    }
  }

  /** One more request id for a known call; the oldest goes past {@link MAX_REQUEST_IDS_PER_CALL}. */
  addDelivery(record: CallRecord, delivery: Delivery): void {
    record.deliveries.push(delivery);
    this.#byRequestId.set(delivery.requestId, record);
    if (record.deliveries.length <= MAX_REQUEST_IDS_PER_CALL) return;
    const oldest = record.deliveries.shift()!;
    if (this.#byRequestId.get(oldest.requestId) === record) this.#byRequestId.delete(oldest.requestId);
  }

  /** A call settled: its response joins the cache. */
  cache(record: CallRecord, response: ToolCallResponseBody): void {
    record.response = response;
    record.responseChars = responseChars(response);
    this.#cachedChars += record.responseChars;
    this.cachedCount++;
    this.#settled.push(record);
  }

  /** Replace a settled call's response (counts kept right). */
  replaceResponse(record: CallRecord, response: ToolCallResponseBody): void {
    const holding = isHolding(record);
    this.#cachedChars -= record.responseChars;
    if (holding) this.#heldChars -= record.responseChars;
    record.response = response;
    record.responseChars = responseChars(response);
    this.#cachedChars += record.responseChars;
    if (holding) this.#heldChars += record.responseChars;
  }

  /** Move one delivery to `state` (and to `epoch` at `now` when written). Returns the characters now held. */
  mark(record: CallRecord, delivery: Delivery, state: DeliveryState, epoch?: number, now?: number): number {
    const heldBefore = isHolding(record);
    delivery.state = state;
    if (epoch !== undefined) {
      delivery.epoch = epoch;
      delivery.sentAt = now!;
    }
    if (heldBefore !== isHolding(record)) this.#heldChars += heldBefore ? -record.responseChars : record.responseChars;
    return this.#heldChars;
  }

  /** Settled calls, oldest first (a snapshot). */
  settledRecords(): CallRecord[] {
    return this.#settled.live();
  }

  /** Apply every bound: forget settled calls past count, size or age (never one whose answer is held), let go of forgotten ones. */
  evict(now: number): void {
    const limits = this.#limits;
    for (let record = this.#settled.peek(); record !== undefined && !isHolding(record); record = this.#settled.peek()) {
      const over = this.cachedCount > limits.maxCachedCalls || this.#cachedChars > limits.maxCachedChars;
      if (!over && now - record.settledAt < limits.cacheAgeMs) break;
      record.state = "forgotten";
      this.cachedCount--;
      this.#cachedChars -= record.responseChars;
      record.response = undefined;
      record.outcome = undefined;
      this.forgottenCount++;
      this.#forgotten.push(record);
    }
    for (let record = this.#forgotten.peek(); record !== undefined; record = this.#forgotten.peek()) {
      if (this.forgottenCount <= limits.maxForgottenCalls && now - record.settledAt < limits.forgottenAgeMs) break;
      this.#remove(record);
    }
  }

  /** forgotten → gone: out of its slot chain and the request-id index. */
  #remove(record: CallRecord): void {
    record.state = "gone";
    this.forgottenCount--;
    this.#unindex(record);
    const { key } = record;
    const slots = this.slotsOf(key);
    const head = slots.get(key.toolCallId);
    if (head === record) {
      if (record.older === undefined) slots.delete(key.toolCallId);
      else slots.set(key.toolCallId, record.older);
      return;
    }
    for (let newer = head; newer !== undefined; newer = newer.older) if (newer.older === record) newer.older = record.older;
  }

  #unindex(record: CallRecord): void {
    for (const { requestId } of record.deliveries) if (this.#byRequestId.get(requestId) === record) this.#byRequestId.delete(requestId);
  }
}

export function isHolding(record: CallRecord): boolean {
  for (const delivery of record.deliveries) if (delivery.state === "held") return true;
  return false;
}

/** The size measure of a response: its text and image data characters. */
function responseChars(response: ToolCallResponseBody): number {
  if ("error" in response) return response.error.length;
  let chars = 0;
  for (const block of response.result.content) chars += block.type === "text" ? block.text.length : block.data.length;
  return chars;
}

/** Records in the order they entered one state; entries that left it are skipped (amortized O(1)). */
class RecordQueue {
  #items: CallRecord[] = [];
  #head = 0;

  constructor(readonly state: CallRecord["state"]) {}

  push(record: CallRecord): void {
    this.#items.push(record);
  }

  /** The oldest record still in this state. */
  peek(): CallRecord | undefined {
    while (this.#head < this.#items.length && this.#items[this.#head]!.state !== this.state) this.#head++;
    if (this.#head > 1_024 && this.#head * 2 > this.#items.length) {
      this.#items.splice(0, this.#head);
      this.#head = 0;
    }
    return this.#items[this.#head];
  }

  /** Every record still in this state, oldest first (a snapshot). */
  live(): CallRecord[] {
    return this.#items.slice(this.#head).filter((record) => record.state === this.state);
  }
}
