/**
 * Where call records live and how they age: a map by tool call id (a chain of records, newest
 * first, one per scope and input), an index by request id, and the bounds of the settled cache and
 * of forgotten calls (count, size, age — checked lazily: the store owns no timer).
 */
import type { ToolCallResponseBody, WireContentBlock } from "../wire/index.js";
import { sameCall } from "./call-key.js";
import { RecordQueue, type CallRecord, type Delivery } from "./call-record.js";
import type { CallLimits } from "./call-table-options.js";

/** Request ids remembered per call; past it the oldest is forgotten (a hostile peer cannot grow one call). */
export const MAX_REQUEST_IDS_PER_CALL = 64;
/** Records kept per tool call id (one per scope and input); past it the oldest settled ones are let go. */
export const MAX_INPUTS_PER_TOOL_CALL_ID = 8;

export class CallStore {
  cachedCount = 0;
  forgottenCount = 0;
  #limits: CallLimits;
  #byToolCallId = new Map<string, CallRecord>();
  #byRequestId = new Map<string, CallRecord>();
  #settled = new RecordQueue("settled");
  #forgotten = new RecordQueue("forgotten");
  #cachedChars = 0;
  /** No age bound is due before this table time (so a request need not look). */
  #ageDueAt = Infinity;

  constructor(limits: CallLimits) {
    this.#limits = limits;
  }

  /** The newest record under a tool call id (the others follow `older`). */
  newest(toolCallId: string): CallRecord | undefined {
    return this.#byToolCallId.get(toolCallId);
  }

  /** The record a request id stands for. */
  ownerOf(requestId: string): CallRecord | undefined {
    return this.#byRequestId.get(requestId);
  }

  /**
   * A new record heads its tool call id's chain (`newest` heads it now), which keeps at most
   * {@link MAX_INPUTS_PER_TOOL_CALL_ID}. A record of the same key (a new model request that reused
   * the id) leaves the chain but stays indexed by its request ids: a re-offer of one of them still
   * gets its own answer until the record ages out.
   */
  add(record: CallRecord, newest: CallRecord | undefined): void {
    let head = newest;
    if (head !== undefined && sameCall(head, record)) {
      head = head.older;
      newest!.older = undefined;
    } else {
      for (let newer = head; newer?.older !== undefined; newer = newer.older) {
        const superseded = newer.older;
        if (!sameCall(superseded, record)) continue;
        newer.older = superseded.older;
        superseded.older = undefined;
        break;
      }
    }
    record.older = head;
    this.#byToolCallId.set(record.toolCallId, record);
    this.#byRequestId.set(record.deliveries[0]!.requestId, record);
    let kept = record;
    for (let count = 1; kept.older !== undefined; count++, kept = kept.older) {
      if (count < MAX_INPUTS_PER_TOOL_CALL_ID || kept.older.state === "running") continue;
      // Past the bound: let go of every older record except a running one (its request ids must
      // still stand for it, or a re-delivery would run it twice).
      let link = kept;
      for (let cut: CallRecord | undefined = kept.older; cut !== undefined; cut = cut.older) {
        if (cut.state === "running") {
          link.older = cut;
          link = cut;
        } else this.#unindex(cut);
      }
      link.older = undefined;
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

  /** A call settled with `response` (or a held one's is replaced by a shorter one). */
  cache(record: CallRecord, response: ToolCallResponseBody): void {
    if (record.response === undefined) {
      this.cachedCount++;
      this.#settled.push(record);
      this.#ageDueAt = Math.min(this.#ageDueAt, record.settledAt + this.#limits.cacheAgeMs);
    } else {
      this.#cachedChars -= record.responseChars;
    }
    record.response = response;
    record.responseChars = "error" in response ? response.error.length : contentChars(response.result.content);
    this.#cachedChars += record.responseChars;
  }

  /** Characters of the answers held for the link (counted when one is held: rare, and at most the cache). */
  heldChars(): number {
    let chars = 0;
    for (const record of this.#settled.live()) if (isHolding(record)) chars += record.responseChars;
    return chars;
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
      record.state = "gone";
      this.forgottenCount--;
      this.#unindex(record);
      const { toolCallId } = record;
      const newest = this.#byToolCallId.get(toolCallId);
      if (newest === record && record.older === undefined) this.#byToolCallId.delete(toolCallId);
      else if (newest === record) this.#byToolCallId.set(toolCallId, record.older!);
      else for (let newer = newest; newer !== undefined; newer = newer.older) if (newer.older === record) newer.older = record.older;
    }
    const settled = this.#settled.peek();
    const forgotten = this.#forgotten.peek();
    this.#ageDueAt = Math.min(
      settled ? settled.settledAt + limits.cacheAgeMs : Infinity,
      forgotten ? forgotten.settledAt + limits.forgottenAgeMs : Infinity,
    );
  }

  /** Apply the age bounds when one is due (count and size change only when a call settles: `evict` then). */
  evictAged(now: number): void {
    if (now >= this.#ageDueAt) this.evict(now);
  }

  #unindex(record: CallRecord): void {
    for (const { requestId } of record.deliveries) if (this.#byRequestId.get(requestId) === record) this.#byRequestId.delete(requestId);
  }
}

export function isHolding(record: CallRecord): boolean {
  for (const delivery of record.deliveries) if (delivery.state === "held") return true;
  return false;
}

function contentChars(content: readonly WireContentBlock[]): number {
  let chars = 0;
  for (const block of content) chars += block.type === "text" ? block.text.length : block.data.length;
  return chars;
}
