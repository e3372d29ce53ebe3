import type { Timers, TimerHandle } from "../internal/timers.js";
import type { InboundRuntimeScope, RuntimeScope, StreamDeltaFrame, TurnFinishedFrame, UpdateLoopStatusFrame } from "../wire/index.js";
import { isScope } from "./runtime-scope-of.js";
import type { Turn } from "./turn.js";
import { eventsFromDelta } from "./turn-events.js";

export interface TurnTrackerOptions {
  timers: Timers;
  /** The session's runtime. */
  runtime(): RuntimeScope | undefined;
  isClientTool(name: string): boolean;
  /** Client tool calls of this runtime still running here (a turn waiting on them is not stalled). */
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

/** The owner of a run that answered no client message (a turn the runtime started by itself). */
const NO_MESSAGE = "";

/** How long a turn that the runtime reports idle waits for its `turn_finished` before it ends itself. */
export const TURN_SETTLE_MS = 1_000;

interface ActiveTurn {
  turn: Turn;
  clientMessageId: string;
  stopReason: string | undefined;
  aborted: boolean;
  settleTimer: TimerHandle | undefined;
  probeTimer: TimerHandle | undefined;
}

/**
 * Routes the runtime's turn frames to the running {@link Turn} and decides
 * when it ends. `turn_finished` ends it — unless its `run_id` belongs to
 * another message (a late frame of an earlier turn). Because frames can be lost
 * across a relay reconnect, an idle loop status that lists this turn's message
 * also ends it (after {@link TURN_SETTLE_MS}), and a turn that goes quiet is
 * probed with a `sync` so the runtime replays that status.
 *
 * A `stream_delta` with `subagent_id` is a subagent's (the runtime sends them
 * on the parent's scope): it becomes a `subagent` event and never touches the
 * turn's own text, tool calls, errors or stop reason. Deltas and
 * `turn_finished` of a run that answered another message, or none (a turn the
 * runtime started itself, such as the `<task-notification>` after a
 * subagent), are not the turn's either.
 */
export class TurnTracker {
  #options: TurnTrackerOptions;
  #active: ActiveTurn | undefined;
  /** run id → the client message id it answered (from loop statuses); bounded. */
  #messageOfRun = new Map<string, string>();

  constructor(options: TurnTrackerOptions) {
    this.#options = options;
  }

  /** The running turn, if any. */
  get turn(): Turn | undefined {
    return this.#active?.turn;
  }

  begin(turn: Turn, clientMessageId: string): void {
    this.#stop();
    this.#active = { turn, clientMessageId, stopReason: undefined, aborted: false, settleTimer: undefined, probeTimer: undefined };
    void turn.result.then(
      () => this.#release(turn),
      () => this.#release(turn),
    );
    this.#options.onActiveChange?.(true);
    this.#armProbe();
  }

  markAborted(): void {
    if (this.#active) this.#active.aborted = true;
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
    const owner = typeof fields.run_id === "string" ? this.#messageOfRun.get(fields.run_id) : undefined;
    if (owner !== undefined && owner !== active.clientMessageId) return;
    if (fields.message_type === "stop_reason" && typeof fields.stop_reason === "string" && fields.stop_reason !== "requires_approval") {
      active.stopReason = fields.stop_reason;
    }
    for (const event of eventsFromDelta(frame.delta, this.#options.isClientTool, (id) => active.turn.toolNameOf(id)))
      active.turn.push(event);
  }

  onLoopStatus(frame: UpdateLoopStatusFrame): void {
    const status = frame.loop_status;
    const mine = this.#options.runtime();
    if (mine && frame.runtime && !isScope(frame.runtime, mine)) return;
    const active = this.#for(frame.runtime);
    // Which message each run answers is remembered even between turns: a late
    // turn_finished of an earlier message must never end the next turn.
    let ours = false;
    const mapped = status.client_message_ids_by_run_id ?? {};
    for (const [runId, messageIds] of Object.entries(mapped)) {
      const mineToo = active !== undefined && messageIds.includes(active.clientMessageId);
      const first = messageIds[0];
      if (first !== undefined) this.#remember(runId, mineToo ? active!.clientMessageId : first);
      if (mineToo) ours = true;
    }
    // An active run no client message started (the runtime's own turn): no message is its owner.
    for (const runId of status.active_run_ids ?? []) {
      if (!(runId in mapped) && !this.#messageOfRun.has(runId)) this.#remember(runId, NO_MESSAGE);
    }
    if (!active) return;
    this.#armProbe();
    const idle = status.status === "WAITING_ON_INPUT" && (status.active_run_ids ?? []).length === 0;
    if (idle && ours && active.settleTimer === undefined) {
      active.settleTimer = this.#options.timers.setTimeout(() => {
        active.settleTimer = undefined;
        active.turn.finish(active.stopReason ?? (active.aborted ? "cancelled" : "end_turn"));
      }, TURN_SETTLE_MS);
    } else if (!idle && active.settleTimer !== undefined) {
      this.#options.timers.clearTimeout(active.settleTimer);
      active.settleTimer = undefined;
    }
  }

  onTurnFinished(frame: TurnFinishedFrame): void {
    const active = this.#for(frame.runtime);
    if (!active) return;
    const runId = typeof frame.run_id === "string" ? frame.run_id : undefined;
    const owner = runId === undefined ? undefined : this.#messageOfRun.get(runId);
    if (owner !== undefined && owner !== active.clientMessageId) return; // a late frame of an earlier turn
    active.turn.finish(frame.stop_reason ?? active.stopReason ?? "end_turn", typeof frame.error === "string" ? frame.error : undefined);
  }

  /** Clear every timer (session closing). */
  stop(): void {
    this.#stop();
  }

  #for(runtime: InboundRuntimeScope | undefined): ActiveTurn | undefined {
    const active = this.#active;
    const mine = this.#options.runtime();
    if (!active || active.turn.done || !mine) return undefined;
    if (runtime && !isScope(runtime, mine)) return undefined;
    return active;
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

  #remember(runId: string, clientMessageId: string): void {
    this.#messageOfRun.set(runId, clientMessageId);
    if (this.#messageOfRun.size > 256) this.#messageOfRun.delete(this.#messageOfRun.keys().next().value as string);
  }

  #release(turn: Turn): void {
    if (this.#active?.turn === turn) this.#stop();
  }

  #stop(): void {
    const active = this.#active;
    if (!active) return;
    if (active.settleTimer !== undefined) this.#options.timers.clearTimeout(active.settleTimer);
    if (active.probeTimer !== undefined) this.#options.timers.clearTimeout(active.probeTimer);
    active.settleTimer = undefined;
    active.probeTimer = undefined;
    this.#active = undefined;
    this.#options.onActiveChange?.(false);
  }
}
