import type { TurnFinishedFrame, UpdateLoopStatusFrame } from "../wire/index.js";

/** The owner of a run that answered no client message (a turn the runtime started by itself). */
export const NO_MESSAGE = "";

/** Runs remembered (run id → the client message it answered). The runtime itself keeps its last 32. */
const MAX_RUNS = 256;
/** Messages whose end the runtime still owes, at most (older ones are dropped first). */
const MAX_OWED = 16;
/** `turn_finished` frames of runs not mapped yet, at most. */
const MAX_UNRESOLVED = 8;

/** Whose end a `turn_finished` is: a client message id, {@link NO_MESSAGE}, or not known yet. */
export type EndOwner = { kind: "message"; clientMessageId: string } | { kind: "none" } | { kind: "unresolved" };

interface UnresolvedEnd {
  frame: TurnFinishedFrame;
  runId: string;
  /** The frame's `event_seq`, when it had one: a loop status after it that does not map the run settles the question. */
  eventSeq: number | undefined;
}

/**
 * Which client message each of the runtime's ends belongs to. The runtime runs one
 * conversation's messages one after another and ends each with exactly one `turn_finished`
 * (`turn_id` is its batch, `run_id` its last run — absent when no run started, as when a turn is
 * aborted before the model answered). So:
 *
 * - a run's message comes from the loop status's `client_message_ids_by_run_id` (the runtime's own
 *   turns, such as a `<task-notification>`, have no entry there);
 * - every message the SDK wrote is **owed** one end, in the order written; an end without a
 *   `run_id` is the oldest owed message's; an end (or a run) of a later message retires every
 *   message owed before it;
 * - an end whose run is not mapped yet (the cloud relay's two sockets can deliver it before the
 *   loop status that maps it) waits for the next loop status: mapped → its message's; not mapped
 *   by a status sent after it → the runtime's own turn, no one's.
 */
export class TurnOwnership {
  /** run id → the client message id it answered ({@link NO_MESSAGE}: none). */
  #messageOfRun = new Map<string, string>();
  /** Client message ids written, whose `turn_finished` has not been seen, oldest first. */
  #owed: string[] = [];
  #unresolved: UnresolvedEnd[] = [];

  /** The message a run answered, if known ({@link NO_MESSAGE} for the runtime's own turns). */
  messageOf(runId: string): string | undefined {
    return this.#messageOfRun.get(runId);
  }

  /** Whether a run of the runtime is known to answer `clientMessageId` (the runtime has the message). */
  hasRunFor(clientMessageId: string): boolean {
    for (const message of this.#messageOfRun.values()) if (message === clientMessageId) return true;
    return false;
  }

  /** Messages whose end is still owed, oldest first (a copy). */
  get owed(): readonly string[] {
    return [...this.#owed];
  }

  /** The SDK wrote this message: the runtime owes it one end. */
  owe(clientMessageId: string): void {
    if (this.#owed.includes(clientMessageId)) return;
    this.#owed.push(clientMessageId);
    if (this.#owed.length > MAX_OWED) this.#owed.shift();
  }

  /** The message will never run (refused, or never written): it is owed nothing. */
  forgive(clientMessageId: string): void {
    const index = this.#owed.indexOf(clientMessageId);
    if (index >= 0) this.#owed.splice(index, 1);
  }

  /**
   * Learn from a loop status which message each run answered (`activeMessage` wins when a run
   * lists several). Returns the ends held for an unmapped run that this status now resolves.
   */
  learn(
    status: UpdateLoopStatusFrame["loop_status"],
    activeMessage: string | undefined,
    eventSeq: number | undefined,
  ): Array<{ frame: TurnFinishedFrame; owner: EndOwner }> {
    const mapped = status.client_message_ids_by_run_id ?? {};
    for (const [runId, messageIds] of Object.entries(mapped)) {
      const first = messageIds[0];
      if (first === undefined) continue;
      const owner = activeMessage !== undefined && messageIds.includes(activeMessage) ? activeMessage : first;
      if (this.#messageOfRun.get(runId) !== owner) this.#remember(runId, owner);
      this.#retireBefore(owner);
    }
    // An active run no client message started (the runtime's own turn): no message is its owner.
    for (const runId of status.active_run_ids ?? []) {
      if (!(runId in mapped) && !this.#messageOfRun.has(runId)) this.#remember(runId, NO_MESSAGE);
    }
    if (this.#unresolved.length === 0) return [];
    const resolved: Array<{ frame: TurnFinishedFrame; owner: EndOwner }> = [];
    this.#unresolved = this.#unresolved.filter((end) => {
      const message = this.#messageOfRun.get(end.runId);
      if (message !== undefined) {
        resolved.push({ frame: end.frame, owner: this.#endOf(message) });
        return false;
      }
      // A status the runtime sent after the end, without the run in its map: the runtime's own turn.
      const later = eventSeq === undefined || end.eventSeq === undefined || eventSeq > end.eventSeq;
      if (later) resolved.push({ frame: end.frame, owner: { kind: "none" } });
      return !later;
    });
    return resolved;
  }

  /** Whose end this `turn_finished` is; an owed message it ends is owed nothing any more. */
  ownerOfEnd(frame: TurnFinishedFrame, eventSeq: number | undefined): EndOwner {
    const runId = typeof frame.run_id === "string" && frame.run_id !== "" ? frame.run_id : undefined;
    if (runId === undefined) {
      const oldest = this.#owed.shift();
      return oldest === undefined ? { kind: "none" } : { kind: "message", clientMessageId: oldest };
    }
    const message = this.#messageOfRun.get(runId);
    if (message !== undefined) return this.#endOf(message);
    this.#unresolved.push({ frame, runId, eventSeq });
    if (this.#unresolved.length > MAX_UNRESOLVED) this.#unresolved.shift();
    return { kind: "unresolved" };
  }

  /** Forget the held ends (the session is closing). */
  clear(): void {
    this.#unresolved = [];
    this.#owed = [];
  }

  #endOf(message: string): EndOwner {
    if (message === NO_MESSAGE) return { kind: "none" };
    const index = this.#owed.indexOf(message);
    if (index >= 0) this.#owed.splice(0, index + 1);
    return { kind: "message", clientMessageId: message };
  }

  /** The runtime is serial: a run of `message` means every message owed before it has ended. */
  #retireBefore(message: string): void {
    const index = this.#owed.indexOf(message);
    if (index > 0) this.#owed.splice(0, index);
  }

  #remember(runId: string, clientMessageId: string): void {
    this.#messageOfRun.delete(runId);
    this.#messageOfRun.set(runId, clientMessageId);
    if (this.#messageOfRun.size > MAX_RUNS) this.#messageOfRun.delete(this.#messageOfRun.keys().next().value as string);
  }
}
