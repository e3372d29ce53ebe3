/**
 * Stopping a thread's running turn: when its client went away, when the client moved on without
 * the tool results, or when a call's timeout answered the runtime with nobody attached. One stop
 * at a time; every request of the thread waits for a stop under way before it starts or continues
 * anything ({@link TurnStop.settled}), at most {@link STOP_WAIT_MS}. See docs/openai-bridge.md.
 */
import type { TimerHandle, Timers } from "../internal/timers.js";
import type { Turn } from "../session/turn.js";
import { ChatApiError } from "./chat-api-error.js";
import type { ThreadInbox } from "./thread-inbox.js";

/** How long stopping a turn waits for the runtime to record a call's answer first. */
const ANSWER_RECORDED_MS = 5_000;
/** How long a request waits for a stop under way before it gives up (502). */
export const STOP_WAIT_MS = 60_000;

export class TurnStop {
  readonly #timers: Timers;
  #stopping: Promise<void> | undefined;

  constructor(timers: Timers) {
    this.#timers = timers;
  }

  /** A stop is under way. */
  get active(): boolean {
    return this.#stopping !== undefined;
  }

  /**
   * Abort `turn` if it runs (its pending calls are answered as cancelled) and resolve once it
   * ended; joins a stop under way. After a call that was just answered (`answeredCallId`), the
   * abort waits until the runtime has recorded that answer (its tool result streams back into
   * `inbox`), at most {@link ANSWER_RECORDED_MS}: an abort that overtakes it makes the runtime
   * record "Interrupted by user" instead. Never rejects.
   */
  stop(turn: Turn | undefined, inbox: ThreadInbox | undefined, answeredCallId?: string): Promise<void> {
    if (turn === undefined || turn.done) return this.#stopping ?? Promise.resolve();
    this.#stopping ??= (async () => {
      if (answeredCallId !== undefined) await inbox?.toolResultSeen(answeredCallId, this.#timers, ANSWER_RECORDED_MS);
      await turn.abort().catch(() => undefined);
    })().finally(() => {
      this.#stopping = undefined;
    });
    return this.#stopping;
  }

  /** Resolves once no stop is under way; throws a 502 when one does not end within {@link STOP_WAIT_MS}. */
  async settled(): Promise<void> {
    const stopping = this.#stopping;
    if (stopping === undefined) return;
    let timer: TimerHandle | undefined;
    const deadline = new Promise<"late">((resolve) => {
      timer = this.#timers.setTimeout(() => resolve("late"), STOP_WAIT_MS);
    });
    try {
      if ((await Promise.race([stopping, deadline])) === "late") {
        throw ChatApiError.upstream(`the agent's previous turn did not stop within ${STOP_WAIT_MS} ms`);
      }
    } finally {
      if (timer !== undefined) this.#timers.clearTimeout(timer);
    }
  }
}
