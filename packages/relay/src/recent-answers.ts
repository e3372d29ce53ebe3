/**
 * The tool answers an environment passed to its listener lately, kept to be written again when the
 * listener connects again (docs/relay.md "Outstanding tool calls"). An answer written into a socket
 * that was dying — the listener's node or its stream died, the link went half-open — never arrived,
 * and the runtime never asks again: it would wait out its 300 s. The listener keeps its pending
 * calls across a reconnect and ignores an answer it no longer waits for, so writing the recent
 * answers again on every listener (re)connect settles the lost ones and costs the others nothing.
 * Bounded by age ({@link RECENT_ANSWER_WINDOW_MS}), count and bytes.
 */
import type { Timers } from "toolrelay/protocol";
import type { RelayFrame } from "./relay-frame.js";

/** How long an answer is written again on a listener reconnect: longer than a half-open listener link takes to be found (3 missed 30 s pings). */
export const RECENT_ANSWER_WINDOW_MS = 120_000;
/** At most this many answers are kept per environment (the oldest go first). */
export const MAX_RECENT_ANSWERS = 1_000;
/** At most this many bytes of answers are kept per environment (the oldest go first). */
export const MAX_RECENT_ANSWER_BYTES = 16 * 1024 * 1024;

export interface RecentAnswer {
  requestId: string;
  runtimeKey: string;
  frame: RelayFrame;
  answeredAt: number;
  /** The listener connection it was last written to (a queued answer: the next one, which flushes it). */
  writtenTo: number;
}

export interface RecentAnswersOptions {
  timers: Timers;
  /** An answer left the window (cluster mode forgets its shared record then). */
  onForgotten?: ((answer: RecentAnswer) => void) | undefined;
}

export class RecentAnswers {
  #answers: RecentAnswer[] = [];
  #bytes = 0;
  /** Counts the listener's connections (each `listener ready`). */
  #connection = 0;
  #options: RecentAnswersOptions;

  constructor(options: RecentAnswersOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#answers.length;
  }

  /**
   * An answer just went to the listener (`"sent"`), was queued for its next connection
   * (`"queued"`), or was answered on another relay node (`"elsewhere"`: written on the next
   * connection here). `answeredAt` defaults to now (a restored one keeps its time).
   */
  add(answer: {
    requestId: string;
    runtimeKey: string;
    frame: RelayFrame;
    delivery: "sent" | "queued" | "elsewhere";
    answeredAt?: number | undefined;
  }): void {
    const writtenTo = answer.delivery === "sent" ? this.#connection : answer.delivery === "queued" ? this.#connection + 1 : -1;
    const kept: RecentAnswer = {
      requestId: answer.requestId,
      runtimeKey: answer.runtimeKey,
      frame: answer.frame.retain(),
      answeredAt: answer.answeredAt ?? this.#options.timers.now(),
      writtenTo,
    };
    this.#answers.push(kept);
    this.#bytes += kept.frame.size;
    this.#prune();
  }

  /**
   * The listener connected (again): the answers inside the window that were written to an earlier
   * connection (not those its queue flushes to this one), oldest first — to be written again.
   */
  connected(): RelayFrame[] {
    this.#connection++;
    this.#prune();
    const again: RelayFrame[] = [];
    for (const answer of this.#answers) {
      if (answer.writtenTo >= this.#connection) continue;
      answer.writtenTo = this.#connection;
      again.push(answer.frame);
    }
    return again;
  }

  /** Forgets the answers that left the window (periodic housekeeping). */
  prune(): void {
    this.#prune();
  }

  clear(): void {
    this.#answers.length = 0;
    this.#bytes = 0;
  }

  #prune(): void {
    const cutoff = this.#options.timers.now() - RECENT_ANSWER_WINDOW_MS;
    while (
      this.#answers.length > 0 &&
      (this.#answers[0]!.answeredAt < cutoff || this.#answers.length > MAX_RECENT_ANSWERS || this.#bytes > MAX_RECENT_ANSWER_BYTES)
    ) {
      const gone = this.#answers.shift()!;
      this.#bytes -= gone.frame.size;
      this.#options.onForgotten?.(gone);
    }
  }
}
