import type { Timers, TimerHandle } from "../internal/timers.js";
import type {
  InboundRuntimeScope,
  RuntimeScope,
  StreamDeltaFrame,
  ToolCallResponseBody,
  TurnFinishedFrame,
  UpdateLoopStatusFrame,
} from "../wire/index.js";
import { isScope } from "./runtime-scope-of.js";
import type { Turn } from "./turn.js";
import { eventsFromDelta } from "./turn-events.js";
import { type EndOwner, TurnOwnership } from "./turn-ownership.js";

export interface TurnTrackerOptions {
  timers: Timers;
  /** The session's runtime. */
  runtime(): RuntimeScope | undefined;
  isClientTool(name: string): boolean;
  /** The response the SDK last wrote for a client tool call: its `tool-result` reports it as the model got it. */
  sentResponse?(toolCallId: string): ToolCallResponseBody | undefined;
  /** Client tool calls of this runtime still running here (a turn waiting on them is not stalled, and never ends by silence). */
  pendingCalls(): number;
  /**
   * Ask the runtime to replay its state (`sync`); used when a turn has gone quiet. Never an
   * input: the runtime does not reliably deduplicate a repeated input and would run it twice.
   */
  probe(runtime: RuntimeScope): void;
  /** Called with `true` when a turn begins and `false` when it ends (e.g. to let a link sync only during turns). */
  onActiveChange?(active: boolean): void;
  /** Silence after which a running turn is probed, in ms. */
  stallProbeMs: number;
}

/**
 * How long a turn whose frames may have been lost (a relay reconnect) must be reported idle, with
 * nothing of it heard and no client call of it running, before it ends without its
 * `turn_finished`. Only then: an idle loop status is no end on its own — the real runtime reports
 * `WAITING_ON_INPUT` for a whole turn that follows the previous one closely.
 */
export const LOST_END_QUIET_MS = 15_000;

interface ActiveTurn {
  turn: Turn;
  clientMessageId: string;
  /** The last terminal stop reason of the turn's runs (`requires_approval` is not one). */
  stopReason: string | undefined;
  /** The last stop reason seen, `requires_approval` included: the turn goes on after it. */
  lastStopReason: string | undefined;
  aborted: boolean;
  /** Frames of this turn may have been lost (the link reconnected): its end may never come. */
  endMayBeLost: boolean;
  /**
   * The runtime has the turn's input: it confirmed it (`input_accepted`), or a run of it answers
   * the turn's message. Until then an idle runtime says nothing about this turn — its input may
   * never have arrived — so the lost-end fallback waits: the input's own deadline decides
   * (`INPUT_UNCONFIRMED`), never an empty `end_turn`.
   */
  inputConfirmed: boolean;
  quietTimer: TimerHandle | undefined;
  probeTimer: TimerHandle | undefined;
}

/**
 * Routes the runtime's turn frames to the running {@link Turn} and ends it when the **runtime**
 * ends it: on the `turn_finished` that {@link TurnOwnership} attributes to its message. Never on
 * silence or an idle loop status alone — the real runtime reports `WAITING_ON_INPUT` with no runs
 * for a whole turn that follows the previous one closely, and a late `turn_finished` of an aborted
 * turn (no `run_id`) belongs to that turn, not to the next.
 *
 * One fallback, where the runtime's end can be lost: after a reconnect of a link whose runtime
 * keeps its state (the cloud relay), a turn reported idle for {@link LOST_END_QUIET_MS} with none of
 * its frames heard, no client call of it running, and no approval awaited ends by itself. A quiet
 * turn is probed with a `sync` so the runtime replays its state.
 *
 * A `stream_delta` with `subagent_id` is a subagent's (the runtime sends them on the parent's
 * scope): it becomes a `subagent` event and never touches the turn's own text, tool calls, errors
 * or stop reason. Deltas of a run that answered another message, or none, are not the turn's.
 */
export class TurnTracker {
  #options: TurnTrackerOptions;
  #active: ActiveTurn | undefined;
  #ownership = new TurnOwnership();

  constructor(options: TurnTrackerOptions) {
    this.#options = options;
  }

  /** The running turn, if any. */
  get turn(): Turn | undefined {
    return this.#active?.turn;
  }

  /** The running turn's client message id, if a turn runs. */
  get activeMessageId(): string | undefined {
    const active = this.#active;
    return active && !active.turn.done ? active.clientMessageId : undefined;
  }

  /** Client message ids the runtime still owes a `turn_finished` (for tests and diagnostics). */
  get owedEnds(): readonly string[] {
    return this.#ownership.owed;
  }

  begin(turn: Turn, clientMessageId: string): void {
    this.#stop();
    this.#active = {
      turn,
      clientMessageId,
      stopReason: undefined,
      lastStopReason: undefined,
      aborted: false,
      endMayBeLost: false,
      inputConfirmed: false,
      quietTimer: undefined,
      probeTimer: undefined,
    };
    void turn.result.then(
      () => this.#release(turn),
      () => this.#release(turn),
    );
    this.#options.onActiveChange?.(true);
    this.#armProbe();
  }

  /** The turn's input is about to be written: the runtime will owe it one end. */
  inputWritten(clientMessageId: string): void {
    this.#ownership.owe(clientMessageId);
  }

  /** The runtime confirmed the running turn's input. */
  inputAccepted(): void {
    if (this.#active) this.#active.inputConfirmed = true;
  }

  /** The turn's input was refused, or never went out: the runtime owes it nothing. */
  inputDropped(clientMessageId: string): void {
    this.#ownership.forgive(clientMessageId);
  }

  markAborted(): void {
    if (this.#active) this.#active.aborted = true;
  }

  /** Frames of the running turn may have been lost (the link reconnected and the runtime kept its turn). */
  framesMayBeLost(): void {
    if (this.#active) this.#active.endMayBeLost = true;
  }

  /** Something of the running turn was heard (a client tool request of this runtime): it is not quiet. */
  onActivity(runtime: InboundRuntimeScope | undefined): void {
    const active = this.#for(runtime);
    if (!active) return;
    this.#armProbe();
    this.#clearQuiet(active);
  }

  onDelta(frame: StreamDeltaFrame): void {
    const active = this.#for(frame.runtime);
    if (!active) return;
    this.#armProbe();
    const subagentId = frame.subagent_id;
    if (typeof subagentId === "string" && subagentId !== "") {
      // A subagent's tools are its own: none of them is a client tool of this session.
      const events = eventsFromDelta(
        frame.delta,
        () => false,
        (id) => active.turn.toolNameOf(id, subagentId),
      );
      for (const event of events) active.turn.push({ type: "subagent", subagentId, event });
      return;
    }
    const fields = frame.delta as { message_type?: unknown; stop_reason?: unknown; run_id?: unknown };
    // A delta of a run that answered another message (a late one of an earlier turn) or no
    // message at all (a turn the runtime started itself, e.g. a <task-notification>) is not ours.
    const owner = typeof fields.run_id === "string" ? this.#ownership.messageOf(fields.run_id) : undefined;
    if (owner !== undefined && owner !== active.clientMessageId) return;
    if (owner === active.clientMessageId) active.inputConfirmed = true;
    this.#clearQuiet(active);
    if (fields.message_type === "stop_reason" && typeof fields.stop_reason === "string") {
      active.lastStopReason = fields.stop_reason;
      if (fields.stop_reason !== "requires_approval") active.stopReason = fields.stop_reason;
    }
    const sentResponse = (id: string) => this.#options.sentResponse?.(id);
    for (const event of eventsFromDelta(frame.delta, this.#options.isClientTool, (id) => active.turn.toolNameOf(id), sentResponse))
      active.turn.push(event);
  }

  onLoopStatus(frame: UpdateLoopStatusFrame, eventSeq?: number): void {
    const status = frame.loop_status;
    const mine = this.#options.runtime();
    if (mine && frame.runtime && !isScope(frame.runtime, mine)) return;
    const active = this.#for(frame.runtime);
    // Which message each run answers is remembered even between turns: a late
    // turn_finished of an earlier message must never end the next turn.
    for (const { frame: end, owner } of this.#ownership.learn(status, active?.clientMessageId, eventSeq)) this.#endBy(end, owner);
    if (!active || active.turn.done) return;
    if (this.#ownership.hasRunFor(active.clientMessageId)) active.inputConfirmed = true;
    this.#armProbe();
    const idle = status.status === "WAITING_ON_INPUT" && (status.active_run_ids ?? []).length === 0;
    if (!idle) this.#clearQuiet(active);
    else if (active.endMayBeLost && active.inputConfirmed && active.quietTimer === undefined) this.#armQuiet(active);
  }

  onTurnFinished(frame: TurnFinishedFrame, eventSeq?: number): void {
    const mine = this.#options.runtime();
    if (!mine || (frame.runtime && !isScope(frame.runtime, mine))) return;
    this.#endBy(frame, this.#ownership.ownerOfEnd(frame, eventSeq));
  }

  /** Clear every timer and held end (session closing). */
  stop(): void {
    this.#stop();
    this.#ownership.clear();
  }

  #endBy(frame: TurnFinishedFrame, owner: EndOwner): void {
    if (owner.kind !== "message") return;
    const active = this.#active;
    if (!active || active.turn.done || owner.clientMessageId !== active.clientMessageId) return; // another message's end
    const error = typeof frame.error === "string" ? frame.error : undefined;
    const runId = typeof frame.run_id === "string" && frame.run_id !== "" ? frame.run_id : undefined;
    active.turn.finish(frame.stop_reason ?? active.stopReason ?? "end_turn", error, runId);
  }

  #for(runtime: InboundRuntimeScope | undefined): ActiveTurn | undefined {
    const active = this.#active;
    const mine = this.#options.runtime();
    if (!active || active.turn.done || !mine) return undefined;
    if (runtime && !isScope(runtime, mine)) return undefined;
    return active;
  }

  /** The lost-end fallback: idle, quiet, nothing running here, no approval awaited, for {@link LOST_END_QUIET_MS}. */
  #armQuiet(active: ActiveTurn): void {
    active.quietTimer = this.#options.timers.setTimeout(() => {
      active.quietTimer = undefined;
      // Still owed: if its end comes after all, it must not end the next turn.
      if (active.turn.done || !active.inputConfirmed || this.#options.pendingCalls() > 0 || active.lastStopReason === "requires_approval")
        return;
      active.turn.finish(active.stopReason ?? (active.aborted ? "cancelled" : "end_turn"));
    }, LOST_END_QUIET_MS);
  }

  #clearQuiet(active: ActiveTurn): void {
    if (active.quietTimer === undefined) return;
    this.#options.timers.clearTimeout(active.quietTimer);
    active.quietTimer = undefined;
  }

  #armProbe(): void {
    const active = this.#active;
    if (!active || this.#options.stallProbeMs <= 0) return;
    if (active.probeTimer !== undefined) this.#options.timers.clearTimeout(active.probeTimer);
    active.probeTimer = this.#options.timers.setTimeout(() => {
      active.probeTimer = undefined;
      const runtime = this.#options.runtime();
      if (active.turn.done || !runtime) return;
      if (this.#options.pendingCalls() === 0) this.#options.probe(runtime);
      this.#armProbe();
    }, this.#options.stallProbeMs);
  }

  #release(turn: Turn): void {
    if (this.#active?.turn === turn) this.#stop();
  }

  #stop(): void {
    const active = this.#active;
    if (!active) return;
    this.#clearQuiet(active);
    if (active.probeTimer !== undefined) this.#options.timers.clearTimeout(active.probeTimer);
    active.probeTimer = undefined;
    this.#active = undefined;
    this.#options.onActiveChange?.(false);
  }
}
