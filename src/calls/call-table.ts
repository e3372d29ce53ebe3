/**
 * The pending-call table: single flight per {@link CallKey}, one outcome per
 * execution, at most one response frame per request id, a replay cache for
 * duplicates, and a grace window for a lost link. No sockets: responses leave
 * through `options.deliver`. See docs/settlement.md.
 */
import { systemTimers, type TimerHandle, type Timers } from "../internal/timers.js";
import { ToolCallAbortError, describeAbortReason } from "./call-abort-reason.js";
import { callSafely } from "./call-safely.js";
import { CallerSignals } from "./caller-signals.js";
import { callKeyId, type CallKey } from "./call-key.js";
import { expiredResponse, responseForOutcome, type CallOutcome } from "./call-outcome.js";
import {
  DEFAULT_RECONNECT_GRACE_MS,
  checkReconnectGraceMs,
  clampTimeoutMs,
  type CallRequest,
  type CallTableOptions,
  type RequestDisposition,
} from "./call-table-options.js";
import type { ToolCallResponseBody } from "./outcome-shapes.js";
import { __plantedBugs } from "./planted-bugs.js";
import { ReplayCache, type DeliveryState, type ReplayEntry } from "./replay-cache.js";
import { invokeRun } from "./run-result.js";
import { createRunningCall, rememberRequestId, type RunningCall } from "./running-call.js";

export class CallTable {
  #options: CallTableOptions;
  #timers: Timers;
  #graceMs: number;
  #cache: ReplayCache;
  #running = new Map<string, RunningCall>();
  #linkDown = false;
  #graceTimer: TimerHandle | undefined;
  #closed = false;
  #closeReason = "the session was closed";
  #callerSignals = new CallerSignals<RunningCall>((call, signal) => this.#callerAborted(call, signal));

  constructor(options: CallTableOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
    this.#graceMs = checkReconnectGraceMs(options.reconnectGraceMs ?? DEFAULT_RECONNECT_GRACE_MS);
    this.#cache = new ReplayCache(options.replay, () => this.#timers.now());
  }

  /** Executions still running. */
  get pendingCount(): number {
    return this.#running.size;
  }

  /** Responses waiting for the link to come back. */
  get heldCount(): number {
    return this.#cache.held().length;
  }

  /** Settled outcomes in the replay cache. */
  get cachedCount(): number {
    return this.#cache.size;
  }

  /** True after `close()`. */
  get closed(): boolean { return this.#closed; }

  /** Take one `external_tool_call_request`: start, join, replay or refuse it. Never throws for a valid request. */
  request(request: CallRequest): RequestDisposition {
    const { requestId } = request;
    const keyId = callKeyId(request.key);
    const running = this.#running.get(keyId);
    if (running !== undefined) {
      if (running.waiters.get(requestId) === true) return "duplicate";
      rememberRequestId(running.waiters, requestId, true);
      return "joined";
    }
    const cached = this.#cache.lookup(keyId);
    // Planted bug (reliability suite): run a settled key again instead of replaying it.
    if (cached.kind === "hit" && !__plantedBugs.reexecuteOnReplay) {
      if (cached.entry.deliveries.get(requestId) === "sent") return "duplicate";
      rememberRequestId(cached.entry.deliveries, requestId, "held");
      this.#flush(cached.entry, requestId);
      return "replayed";
    }
    if (cached.kind === "expired") {
      if (cached.sentRequestIds.includes(requestId)) return "duplicate";
      const written = !this.#linkDown && this.#write(requestId, expiredResponse(request.key.toolCallId));
      if (written) this.#cache.noteExpiredAnswer(keyId, requestId);
      return "expired";
    }
    if (this.#closed) {
      this.#refuse(keyId, request);
      return "closed";
    }
    this.#start(keyId, request);
    return "started";
  }

  /** Settle every running call whose key matches as `cancelled` now (its response is sent). Returns how many. */
  cancel(match: (key: CallKey) => boolean, reason: string): number {
    let count = 0;
    for (const call of [...this.#running.values()]) {
      if (call.settled || !match(call.key)) continue;
      this.#settle(call, { kind: "cancelled", reason }, ToolCallAbortError.cancelled(reason));
      count++;
    }
    return count;
  }

  /** The link is lost: running calls keep running; the grace window starts (once, for the whole table). */
  linkDown(): void {
    if (this.#closed || this.#linkDown) return;
    this.#linkDown = true;
    this.#graceTimer = this.#timers.setTimeout(() => this.#graceExpired(), this.#graceMs);
  }

  /**
   * The link is back: the grace window stops. With `redeliver` (the runtime kept its pending calls) every held
   * response is sent for its original request id; without, held responses and the request ids of running calls
   * are given up (the runtime forgot them; running calls only after a `linkDown`). Outcomes stay cached either way.
   */
  linkUp(options: { redeliver: boolean }): void {
    if (this.#closed) return;
    this.#clearGraceTimer();
    const wasDown = this.#linkDown;
    this.#linkDown = false;
    for (const [entry, requestId] of this.#cache.held()) {
      if (options.redeliver) this.#flush(entry, requestId);
      else entry.deliveries.set(requestId, "dropped");
    }
    if (options.redeliver || !wasDown) return;
    for (const call of this.#running.values()) for (const requestId of call.waiters.keys()) call.waiters.set(requestId, false);
  }

  /**
   * Settle every running call as `cancelled` at once and clear every timer.
   * Idempotent. Later requests never run: a new key is answered `cancelled`
   * ("closed"); a settled key is still replayed from the cache.
   */
  close(reason = "the session was closed"): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeReason = reason;
    this.#clearGraceTimer();
    this.#settleEvery({ kind: "cancelled", reason }, ToolCallAbortError.cancelled(reason));
    // Held responses can never be sent now; the cache stays, so a repeated request id gets no second frame.
    for (const [entry, requestId] of this.#cache.held()) entry.deliveries.set(requestId, "dropped");
  }

  /** After close: answer a new key `cancelled` without running it (cached: a repeat is a duplicate). */
  #refuse(keyId: string, request: CallRequest): void {
    const outcome: CallOutcome = { kind: "cancelled", reason: this.#closeReason };
    this.#record(keyId, outcome, responseForOutcome(outcome, request), new Map([[request.requestId, "held"]]));
  }

  #start(keyId: string, request: CallRequest): void {
    const timeoutMs = clampTimeoutMs(request.timeoutMs);
    const { key, toolName, annotations, requestId } = request;
    const call = createRunningCall({ key, keyId, toolName, annotations, requestId, startedAt: this.#timers.now() });
    this.#running.set(keyId, call);
    const callerSignal = request.signal;
    if (callerSignal?.aborted === true) return this.#callerAborted(call, callerSignal);
    const onTimeout = (): void => this.#settle(call, { kind: "timeout", timeoutMs }, ToolCallAbortError.timeout(timeoutMs));
    call.timer = this.#timers.setTimeout(onTimeout, timeoutMs);
    if (callerSignal !== undefined) {
      call.callerSignal = callerSignal;
      this.#callerSignals.watch(callerSignal, call);
    }
    invokeRun(toolName, request.run, call.controller.signal, (outcome) => this.#finish(call, outcome));
  }

  /** `run` produced `outcome`: settle with it, or report it as late. */
  #finish(call: RunningCall, outcome: CallOutcome): void {
    if (!call.settled) return this.#settle(call, outcome);
    const onLate = this.#options.onLate;
    if (onLate !== undefined) this.#call(() => onLate.call(this.#options, { key: call.key, toolName: call.toolName, outcome }));
  }

  /**
   * The one way a call ends. Sets the outcome synchronously (the first caller
   * wins; later ones do nothing), cleans up, caches, delivers, then aborts the
   * callback's signal (when `abortReason` is given) and reports.
   */
  #settle(call: RunningCall, outcome: CallOutcome, ...abortReason: [] | [unknown]): void {
    if (call.settled) return;
    call.settled = true;
    this.#cleanup(call);
    const settledAt = this.#timers.now();
    const response = responseForOutcome(outcome, { toolName: call.toolName, annotations: call.annotations });
    // A `disconnected` outcome is held like any other: if the link comes back with
    // `redeliver` (the runtime kept the call), the runtime gets "outcome unknown"
    // at once instead of waiting out its own 5-minute timeout.
    const deliveries = new Map<string, DeliveryState>();
    for (const [requestId, live] of call.waiters) deliveries.set(requestId, live ? "held" : "dropped");
    this.#record(call.keyId, outcome, response, deliveries);
    if (abortReason.length > 0) call.controller.abort(abortReason[0]);
    const onSettled = this.#options.onSettled;
    if (onSettled === undefined) return;
    const event = { key: call.key, requestIds: [...deliveries.keys()], toolName: call.toolName, outcome };
    this.#call(() => onSettled.call(this.#options, { ...event, durationMs: settledAt - call.startedAt }));
  }

  /** Cache a settled outcome, then deliver it to every request id still held. */
  #record(keyId: string, outcome: CallOutcome, response: ToolCallResponseBody, deliveries: Map<string, DeliveryState>): void {
    const entry: ReplayEntry = { keyId, outcome, response, settledAt: this.#timers.now(), deliveries };
    this.#cache.set(entry);
    for (const requestId of deliveries.keys()) this.#flush(entry, requestId);
  }

  /** All per-call cleanup, in one place: timer, caller-signal watch (and its listener), table entry. */
  #cleanup(call: RunningCall): void {
    // Planted bug (reliability suite): leave the timeout timer armed.
    if (call.timer !== undefined && !__plantedBugs.leakTimer) this.#timers.clearTimeout(call.timer);
    call.timer = undefined;
    if (call.callerSignal !== undefined) this.#callerSignals.unwatch(call.callerSignal, call);
    call.callerSignal = undefined;
    if (this.#running.get(call.keyId) === call) this.#running.delete(call.keyId);
  }

  /** Send the held response of `entry` for `requestId` if the link is up; after close, one that cannot be sent is dropped. */
  #flush(entry: ReplayEntry, requestId: string): void {
    if (entry.deliveries.get(requestId) !== "held") return;
    if (!this.#linkDown && this.#write(requestId, entry.response)) {
      entry.deliveries.set(requestId, "sent");
      // Sent from an entry already evicted to a tombstone: the tombstone must know it, or a repeat of
      // this request id would get the "expired" answer as a second frame.
      this.#cache.noteExpiredAnswer(entry.keyId, requestId);
    } else if (this.#closed) entry.deliveries.set(requestId, "dropped");
  }

  #write(requestId: string, response: ToolCallResponseBody): boolean {
    let written = false;
    this.#call(() => void (written = this.#options.deliver(requestId, response) === true));
    return written;
  }

  /** The caller's signal fired: `cancelled`; the callback's signal gets the caller's reason as is. */
  #callerAborted(call: RunningCall, signal: AbortSignal): void {
    this.#settle(call, { kind: "cancelled", reason: describeAbortReason(signal.reason) }, signal.reason);
  }

  #graceExpired(): void {
    this.#graceTimer = undefined;
    this.#settleEvery({ kind: "disconnected", graceMs: this.#graceMs }, ToolCallAbortError.disconnected(this.#graceMs));
  }

  #settleEvery(outcome: CallOutcome, abortReason: ToolCallAbortError): void {
    for (const call of [...this.#running.values()]) this.#settle(call, outcome, abortReason);
  }

  #call = (callback: () => void): void => callSafely(callback, this.#options.onCallbackError);

  #clearGraceTimer(): void {
    if (this.#graceTimer !== undefined) this.#timers.clearTimeout(this.#graceTimer);
    this.#graceTimer = undefined;
  }
}
