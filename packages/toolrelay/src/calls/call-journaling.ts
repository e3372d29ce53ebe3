/**
 * How the call table (call-table.ts) uses a {@link CallJournal}: what the journal holds of a new
 * call decides whether it runs; a call is recorded before its callback runs, and settles into the
 * journal only when this table created its record (a table that lost the race never overwrites
 * the winner's). Every journal failure becomes the `journal-failed` outcome: the call does not run.
 * The table keeps the call's states; this file only talks to the journal. See docs/call-journal.md.
 */
import type { ClientTool } from "../tools/index.js";
import { errorText } from "../tools/index.js";
import type { ToolCallResponseBody } from "../wire/index.js";
import { journalInputDigest, type CallJournal, type JournalEntry } from "./call-journal.js";
import type { CallOutcome } from "./call-outcome.js";
import type { CallRecord } from "./call-record.js";

/** What the table does with the journal's answer; each is called at most once per call. */
export interface JournalingSteps {
  /** The call is this table's to run (the journal holds nothing, or an idempotent call that started). */
  run(): void;
  /** The call is answered without running (its record, "outcome unknown", or the journal failed). */
  answer(outcome: CallOutcome): void;
}

export class CallJournaling {
  readonly #journal: CallJournal;

  constructor(journal: CallJournal) {
    this.#journal = journal;
  }

  /** A new call: look it up; `steps.run()` when the journal holds nothing of it (or it may run again), else `steps.answer`. */
  recall(record: CallRecord, steps: JournalingSteps): void {
    let found: ReturnType<CallJournal["find"]>;
    try {
      found = this.#journal.find(record.idempotencyKey);
    } catch (error) {
      return void steps.answer(this.#failed(error));
    }
    const recalled = (entry: JournalEntry | undefined): void => {
      if (record.state !== "running") return;
      if (entry === undefined) return void steps.run();
      if (entry.key !== record.idempotencyKey) record.adoptIdempotencyKey(entry.key);
      if (entry.state === "started" && isIdempotent(record.tool)) return void steps.run();
      steps.answer(recordedOutcome(entry));
    };
    if (!isPromiseLike(found)) return void recalled(found);
    found.then(recalled, (error: unknown) => steps.answer(this.#failed(error)));
  }

  /**
   * Record the call as started before its callback runs (`startedAt`: epoch ms); `steps.run()` once
   * the record is durable and the call is this table's. Sets `record.journalClaim`.
   */
  claim(record: CallRecord, tool: ClientTool, input: unknown, startedAt: number, steps: JournalingSteps): void {
    const entry: JournalEntry = {
      key: record.idempotencyKey,
      state: "started",
      toolName: record.toolName,
      agentId: record.agentId,
      conversationId: record.conversationId,
      toolCallId: record.toolCallId,
      inputSha256: journalInputDigest(record.inputDigest),
      startedAt,
    };
    let written: Promise<JournalEntry | undefined>;
    try {
      written = this.#journal.start(entry, input);
    } catch (error) {
      written = Promise.reject(error);
    }
    record.journalClaim = written.then(
      (existing) => {
        // The journal already held the call (a previous life, another process): an idempotent one runs again, else it is answered from the record.
        const owned = existing === undefined || (existing.state === "started" && isIdempotent(tool));
        if (record.state === "running") owned ? steps.run() : steps.answer(recordedOutcome(existing!));
        return owned;
      },
      (error: unknown) => {
        steps.answer(this.#failed(error));
        return false;
      },
    );
    for (const { requestId } of record.deliveries.slice(1)) this.alias(record, requestId);
  }

  /** The call settled with `response` at `settledAt` (epoch ms): written once its claim is known to be this table's. Never rejects. */
  settle(record: CallRecord, response: ToolCallResponseBody, settledAt: number): void {
    const key = record.idempotencyKey;
    record.journalClaim?.then((owned) => (owned ? this.#journal.settle(key, response, settledAt) : undefined)).catch(() => undefined);
  }

  /** A re-attempt's request id, findable under its own key once the claim is this table's. Never rejects. */
  alias(record: CallRecord, requestId: string): void {
    const alias = record.keyOfRequest(requestId);
    const key = record.idempotencyKey;
    if (alias === key) return;
    record.journalClaim?.then((owned) => (owned ? this.#journal.alias(alias, key) : undefined)).catch(() => undefined);
  }

  #failed(error: unknown): CallOutcome {
    return { kind: "journal-failed", message: `${this.#journal.kind} journal: ${errorText(error)}` };
  }
}

/** Whether a call the journal says started may run again: the tool says it is idempotent (or read-only). */
export function isIdempotent(tool: ClientTool | undefined): boolean {
  const annotations = tool?.annotations;
  return annotations?.idempotentHint === true || annotations?.readOnlyHint === true;
}

/** The outcome of a call answered from its journal record: its stored response, or "outcome unknown". */
function recordedOutcome(entry: JournalEntry): CallOutcome {
  if (entry.state === "settled" && entry.response !== undefined)
    return { kind: "recorded", response: entry.response, settledAt: entry.settledAt ?? entry.startedAt };
  return { kind: "outcome-unknown", reason: entry.state === "started" ? "started" : "expired", startedAt: entry.startedAt };
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === "function";
}
