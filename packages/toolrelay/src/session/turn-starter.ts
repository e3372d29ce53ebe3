/**
 * Starts the session's turns, one at a time, and stops them. The turn's
 * input is written exactly once: while the link is not open it waits for the
 * reconnect, and once written it is never written again — the runtime does
 * not reliably deduplicate a repeated input and would run it twice. The
 * running turn, its unwritten input and whether that input awaits its
 * confirmation live here and nowhere else; whether the link is up is always
 * asked of the link.
 */
import type { CallTable } from "../calls/index.js";
import { ToolrelayError, asToolrelayError, isToolrelayError } from "../errors.js";
import { nextRequestId } from "../internal/request-id.js";
import type { TimerHandle } from "../internal/timers.js";
import type { RequestTracker } from "../transport/request-tracker.js";
import type { InputAcceptedFrame, InputFrame } from "../wire/index.js";
import type { OwnRuntime } from "./own-runtime.js";
import type { RuntimeRegistration } from "./runtime-registration.js";
import type { MessageInput, SendOptions, SessionParts } from "./session-parts.js";
import { Turn } from "./turn.js";
import type { TurnTracker } from "./turn-tracker.js";

/** How long an aborted turn waits for the runtime's `turn_finished` before it ends itself. */
const ABORT_SETTLE_MS = 2_000;

/**
 * The least time between a turn's end and the next turn's input, in every mode but `unrestricted`
 * (ms). Letta Code 0.32.18 cleans a conversation up after `turn_finished` and, when the next input
 * arrives within that window (measured: 100–200 ms on a lightly loaded machine), drops the
 * conversation's object while the new turn runs on it: a permission request the turn then asks
 * (`can_use_tool`, sent for every client tool call in those modes) is answered "no longer pending"
 * and the turn never ends. The window grows with load (a stall was seen once at a 400 ms pause);
 * when it is hit anyway, the session learns it from the runtime's answer and fails the turn
 * (`TURN_FAILED`) instead of waiting for ever. In `unrestricted` nothing is asked and no gap is kept.
 */
export const DEFAULT_TURN_GAP_MS = 1_000;

type InputMessage = InputFrame & { request_id: string };

export interface TurnStarterOptions extends Pick<SessionParts, "link" | "timers" | "observer" | "requestTimeoutMs" | "sandbox"> {
  /** Sends the input and abort requests and waits for their answers. */
  requests: RequestTracker;
  /** Re-sends the tool set before a turn when `reassertToolsEachTurn` is set. */
  registration: RuntimeRegistration;
  /** The session's runtime (known once it is registered). */
  own: OwnRuntime;
  /** Routes the runtime's turn frames to the turn this starts. */
  turns: TurnTracker;
  /** The session's client tool calls: an abort answers the running ones as cancelled. */
  calls: CallTable;
  /** `reassertToolsEachTurn` of the session options. */
  reassertToolsEachTurn: boolean;
  /** An abort the runtime did not confirm (the session reports it as an `error` event). */
  onError(error: ToolrelayError): void;
  /** The least time from a turn's end to the next turn's input (ms); `0`: none. See {@link DEFAULT_TURN_GAP_MS}. */
  turnGapMs: number;
}

export class TurnStarter {
  #options: TurnStarterOptions;
  /** The running turn's input while it waits for the link: it was never written, so it is written once the link is back. */
  #unwrittenInput: { turn: Turn; frame: InputMessage } | undefined;
  /** The running turn's input was written and the runtime has not confirmed it yet. */
  #inputUnconfirmed = false;
  #abortTimer: TimerHandle | undefined;
  /** When the last turn ended (`timers.now()`), for the gap before the next input. */
  #lastEndedAt: number | undefined;
  /** The gap's timer while a turn's input waits it out, and what ends the wait early (close). */
  #gapWait: { timer: TimerHandle; release: () => void } | undefined;

  constructor(options: TurnStarterOptions) {
    this.#options = options;
  }

  /** Start a turn with a user message (see `Session.send`); throws while another turn runs. */
  start(message: MessageInput, options: SendOptions): Turn {
    const { link, sandbox, observer } = this.#options;
    if (link.state === "closed" && !sandbox) throw linkClosedForGood();
    const running = this.#options.turns.turn;
    if (running && !running.done) throw new ToolrelayError("TURN_IN_PROGRESS", "a turn is already running; await it or abort it first");
    const runtime = this.#options.own.scope!;
    const turn = Turn.create((target) => this.#abortTurn(target));
    const clientMessageId = nextRequestId("message");
    this.#options.turns.begin(turn, clientMessageId);
    observer.turnStarted(turn.result, message, clientMessageId);
    const frame = {
      type: "input",
      request_id: nextRequestId("input"),
      runtime,
      payload: {
        kind: "create_message",
        messages: [{ role: "user", content: message, client_message_id: clientMessageId }],
        exclude_interactive_tools: true,
      },
    } as InputMessage;
    // HOOK (managed sandbox): refresh its TTL before the turn. A sandbox that is gone fails the turn
    // with SANDBOX_EXPIRED before the input is written — also when its link already closed with it.
    const checked = sandbox
      ? sandbox.beforeTurn().then(() => {
          if (link.state === "closed") throw linkClosedForGood();
        })
      : Promise.resolve();
    const reasserted = this.#options.reassertToolsEachTurn
      ? checked.then(() => this.#options.registration.reassertTools(runtime))
      : checked;
    const ready = reasserted.then(() => this.#gap(turn));
    void ready.then(() => this.#writeInput(turn, frame)).catch((error: unknown) => turn.fail(asToolrelayError(error)));
    const ended = () => {
      this.#lastEndedAt = this.#options.timers.now();
    };
    void turn.result.then(ended, ended);
    const signal = options.signal;
    if (signal) {
      if (signal.aborted) void turn.abort();
      else {
        const onAbort = () => void turn.abort();
        signal.addEventListener("abort", onAbort);
        void turn.result.finally(() => signal.removeEventListener("abort", onAbort)).catch(() => undefined);
      }
    }
    return turn;
  }

  /** Wait out what is left of the gap after the last turn's end (see {@link DEFAULT_TURN_GAP_MS}). */
  #gap(turn: Turn): Promise<void> | undefined {
    const { timers, turnGapMs } = this.#options;
    // A turn that ended before its gap began (the session closed in between) waits for nothing: no timer outlives it.
    if (turnGapMs === 0 || this.#lastEndedAt === undefined || turn.done) return undefined;
    const left = this.#lastEndedAt + turnGapMs - timers.now();
    if (!(left > 0)) return undefined;
    return new Promise((resolve) => {
      const release = () => {
        this.#gapWait = undefined;
        resolve();
      };
      this.#gapWait = { timer: timers.setTimeout(release, left), release };
    });
  }

  /** Abort the running turn, if any (see {@link Turn.abort}). */
  abort(): Promise<void> {
    const running = this.#options.turns.turn;
    return running && !running.done ? this.#abortTurn(running) : Promise.resolve();
  }

  /** The link dropped and the runtime forgot the turn: it fails with `lost`, or `INPUT_UNCONFIRMED` while its input awaits confirmation. */
  linkLost(lost: ToolrelayError): void {
    this.#options.turns.turn?.fail(this.#inputUnconfirmed ? unconfirmed(lost) : lost);
  }

  /** The link is back and the runtime registered again: write the input that never went out, if its turn still runs. */
  writeUnwrittenInput(): void {
    const unwritten = this.#unwrittenInput;
    this.#unwrittenInput = undefined;
    if (unwritten && !unwritten.turn.done) {
      this.#writeInput(unwritten.turn, unwritten.frame).catch((error: unknown) => unwritten.turn.fail(asToolrelayError(error)));
    }
  }

  /** The session is closing: the running turn fails with `error`, and an abort stops waiting for its settle time. */
  close(error: ToolrelayError): void {
    if (this.#abortTimer !== undefined) this.#options.timers.clearTimeout(this.#abortTimer);
    if (this.#gapWait !== undefined) {
      // The waiting turn fails below; its input is never written (#writeInput checks `done`).
      this.#options.timers.clearTimeout(this.#gapWait.timer);
      this.#gapWait.release();
    }
    this.#options.turns.turn?.fail(error);
  }

  /**
   * Write the turn's input once. Not open yet (or the socket was already closing, so nothing went
   * out): it waits for the reconnect. Written but unconfirmed when the link drops: the turn fails
   * with `INPUT_UNCONFIRMED` — it is never written twice (the runtime does not reliably dedupe).
   */
  async #writeInput(turn: Turn, frame: InputMessage): Promise<void> {
    if (turn.done) return;
    if (this.#options.link.state !== "open") {
      this.#unwrittenInput = { turn, frame };
      return;
    }
    this.#inputUnconfirmed = true;
    const clientMessageId = this.#clientMessageIdOf(frame);
    this.#options.turns.inputWritten(clientMessageId);
    let accepted: InputAcceptedFrame;
    try {
      accepted = await this.#options.requests.request(frame, { responseType: "input_accepted", timeoutMs: this.#options.requestTimeoutMs });
    } catch (error) {
      if (isToolrelayError(error) && error.details?.written === false) {
        this.#options.turns.inputDropped(clientMessageId);
        this.#unwrittenInput = { turn, frame };
        return;
      }
      throw unconfirmed(error);
    } finally {
      this.#inputUnconfirmed = false;
    }
    if (!accepted.accepted) {
      this.#options.turns.inputDropped(clientMessageId);
      turn.fail(new ToolrelayError("REQUEST_FAILED", `the runtime refused the message: ${accepted.error ?? "no reason given"}`));
      return;
    }
    if (!turn.done) this.#options.turns.inputAccepted();
  }

  /** The client message id `start` put in the input (one message, always set). */
  #clientMessageIdOf(frame: InputMessage): string {
    const payload = frame.payload as { messages?: ReadonlyArray<{ client_message_id?: string | undefined }> | undefined };
    return payload.messages?.[0]?.client_message_id ?? "";
  }

  async #abortTurn(turn: Turn): Promise<void> {
    const { timers } = this.#options;
    const runtime = this.#options.own.scope!;
    this.#options.turns.markAborted();
    if (this.#unwrittenInput?.turn === turn) this.#unwrittenInput = undefined;
    const frame = { type: "abort_message" as const, request_id: nextRequestId("abort"), runtime };
    const response = this.#options.requests.request(frame, {
      responseType: "abort_message_response",
      timeoutMs: this.#options.requestTimeoutMs,
    });
    // The runtime waits for external calls to settle before it ends an aborted turn (up to 5
    // minutes): answer ours (all of this runtime's) now. The real runtime sometimes answers the
    // abort of a running turn `aborted: false`; the turn then goes on with these answers and ends
    // as the runtime says (`end_turn`), which is what the turn's result reports.
    this.#options.calls.cancel("the turn was aborted");
    try {
      await response;
    } catch (error) {
      this.#options.onError(asToolrelayError(error));
    }
    if (turn.done) return;
    await new Promise<void>((resolve) => {
      this.#abortTimer = timers.setTimeout(() => {
        this.#abortTimer = undefined;
        turn.finish("cancelled");
        resolve();
      }, ABORT_SETTLE_MS);
      void turn.result.then(
        () => resolve(),
        () => resolve(),
      );
    });
    if (this.#abortTimer !== undefined) timers.clearTimeout(this.#abortTimer);
    this.#abortTimer = undefined;
  }
}

function linkClosedForGood(): ToolrelayError {
  return new ToolrelayError("CONNECTION_CLOSED", "the link to the runtime is closed for good; start a new session");
}

/** The input went out and its confirmation never came: it may or may not have been received. */
function unconfirmed(error: unknown): ToolrelayError {
  const why = error instanceof Error ? error.message : String(error);
  return new ToolrelayError(
    "INPUT_UNCONFIRMED",
    `the message was written but the runtime did not confirm it (${why}); it may or may not have been received: check the conversation before sending it again`,
    { cause: error },
  );
}
