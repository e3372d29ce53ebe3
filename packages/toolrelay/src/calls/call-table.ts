/**
 * The pending-call table: one {@link CallRecord} per call from request to response (states in
 * call-record.ts, records kept in a {@link CallStore}). It runs each call at most once, settles it
 * exactly once and writes at most one response per request id per connection epoch through its one
 * `output` callback. It learns of epochs, never of "the link is down": a write that does not go out
 * is held. No sockets. See docs/settlement.md.
 */
import { RUNTIME_MAX_TOOL_TIMEOUT_MS } from "../internal/runtime-limits.js";
import { systemTimers, type TimerHandle, type Timers } from "../internal/timers.js";
import { errorText, executeTool, ToolCallAbortError, type ClientTool, type InputValidation } from "../tools/index.js";
import { CallJournaling } from "./call-journaling.js";
import { sameCall, sameScope } from "./call-key.js";
import { expiredResponse, responseForOutcome, type CallOutcome } from "./call-outcome.js";
import { CallContext, CallRecord, type Delivery } from "./call-record.js";
import { CallStore } from "./call-store.js";
import type {
  ApprovalAsk,
  ApprovalVerdict,
  CallLimits,
  CallRequest,
  CallTableOptions,
  CallTableOutput,
  RequestDisposition,
} from "./call-table-options.js";
import { guardOutput, resolveCallLimits } from "./call-table-options.js";
import { DeadlineQueue } from "./deadline-queue.js";

type AbortingOutcome = CallOutcome & { kind: "timeout" | "cancelled" | "disconnected" };

export class CallTable {
  readonly limits: Readonly<CallLimits>;
  #output: CallTableOutput;
  #approve: ((ask: ApprovalAsk) => Promise<ApprovalVerdict>) | undefined;
  #journal: CallJournaling | undefined;
  #timers: Timers;
  #store: CallStore;
  #deadlines: DeadlineQueue;
  #lostAt: number | undefined;
  #graceTimer: TimerHandle | undefined;
  #closeReason: string | undefined;
  /** The clock reading (`timers.now()`, epoch ms by default) of table time 0: a record's times are relative to it (small integers, not heap numbers). */
  readonly origin: number;

  constructor(options: CallTableOptions) {
    this.limits = Object.freeze(resolveCallLimits(options.limits));
    this.#output = guardOutput(options.output);
    this.#approve = options.approve;
    this.#journal = options.journal === undefined ? undefined : new CallJournaling(options.journal);
    this.#timers = options.timers ?? systemTimers;
    this.origin = this.#timers.now();
    this.#store = new CallStore(this.limits);
    this.#deadlines = new DeadlineQueue(
      this.#timers,
      () => this.#now(),
      (record) =>
        record.approving
          ? this.#deny(record, { kind: "denied", reason: "timeout", message: `${Math.round(record.deadlineMs / 1_000)} s` })
          : this.#abort([record], { kind: "timeout", timeoutMs: record.deadlineMs }),
    );
  }

  /** Calls running now. */
  get runningCount(): number {
    return this.#deadlines.size;
  }

  /** What the table holds now: running calls, cached and forgotten ones, answers held for the link, timers armed. */
  counts(): { running: number; cached: number; forgotten: number; held: number; timers: number } {
    const { cachedCount: cached, forgottenCount: forgotten } = this.#store;
    const held = this.#store.settledRecords().flatMap((record) => record.deliveries.filter((delivery) => delivery.state === "held")).length;
    return { running: this.#deadlines.size, cached, forgotten, held, timers: this.#deadlines.timerCount + (this.#graceTimer ? 1 : 0) };
  }

  /** Take one `external_tool_call_request`. Never throws. */
  request(request: CallRequest): RequestDisposition {
    const now = this.#now();
    this.#store.evictAged(now);
    // A request id seen before is that call's again (a re-delivery: the relay re-offers a request
    // with its own id), or a conflict when it came with another key.
    const owner = this.#store.ownerOf(request.requestId);
    if (owner !== undefined) return sameCall(owner, request) ? this.#again(owner, request) : this.#conflict(owner, request);
    // A new request id is a call of the same key again only as `isAskedAgainBy` says (a re-attempt);
    // otherwise it is a new model request that reused the tool call id, and it runs.
    // Only the newest call of the key is asked: an older one was followed by a new model request.
    const turn = request.turn ?? "";
    const newest = this.#store.newest(request.toolCallId);
    let record = newest;
    let reused = false;
    for (; record !== undefined && !sameCall(record, request); record = record.older) reused ||= sameScope(record, request);
    if (record?.isAskedAgainBy(turn, request.epoch)) return this.#again(record, request);
    reused ||= record !== undefined;
    if (this.#closeReason !== undefined) {
      this.#output.response(undefined, request.requestId, responseForOutcome({ kind: "cancelled", reason: this.#closeReason }, request));
      return "closed";
    }
    const delivery: Delivery = { requestId: request.requestId, state: "waiting", epoch: request.epoch, sentAt: 0 };
    const timeoutMs = request.tool?.timeoutMs ?? this.limits.toolTimeoutMs;
    record = new CallRecord(request, request.toolName, request.tool, now, timeoutMs, delivery, turn);
    this.#store.add(record, newest);
    const busy = this.#deadlines.size >= this.limits.maxConcurrentCalls;
    this.#deadlines.add(record);
    if (busy) this.#settle(record, { kind: "busy", limit: this.limits.maxConcurrentCalls });
    else if (this.#journal !== undefined)
      this.#journal.recall(
        record,
        this.#steps(record, () => this.#run(record, request)),
      );
    else this.#run(record, request);
    if (record.state === "running") this.#deadlines.watch(record);
    return busy ? "busy" : reused ? "reused" : "started";
  }

  /** Settle every running call as `cancelled` now (the turn was aborted). Returns how many. */
  cancel(reason: string): number {
    const running = this.#deadlines.live();
    this.#abort(running, { kind: "cancelled", reason });
    return running.length;
  }

  /** The link of an epoch is lost: running calls keep running for the grace window. */
  epochEnded(): void {
    if (this.#closeReason !== undefined) return;
    this.#lostAt ??= this.#now();
    if (this.#graceTimer !== undefined || this.#deadlines.size === 0) return;
    this.#graceTimer = this.#timers.setTimeout(() => {
      this.#graceTimer = undefined;
      this.#abort(this.#deadlines.live(), { kind: "disconnected", graceMs: this.limits.reconnectGraceMs });
    }, this.limits.reconnectGraceMs);
  }

  /**
   * Epoch `epoch` began. `runtimeKeptCalls` (cloud): held answers are written now, and answers
   * written on the old link within `resendWindowMs` before it was lost are written again. Else
   * (local) the runtime forgot the old epochs' requests: they are dropped, and running calls
   * nobody waits for any more settle `disconnected`.
   */
  epochStarted(epoch: number, runtimeKeptCalls: boolean): void {
    if (this.#closeReason !== undefined) return;
    this.#clearGrace();
    const { resendWindowMs, reconnectGraceMs: graceMs } = this.limits;
    const resendAfter = this.#lostAt === undefined || resendWindowMs === 0 ? Infinity : this.#lostAt - resendWindowMs;
    this.#lostAt = undefined;
    const orphans: CallRecord[] = [];
    for (const record of [...this.#deadlines.live(), ...this.#store.settledRecords()]) {
      for (const delivery of record.deliveries) {
        if (delivery.epoch >= epoch) continue;
        const { state } = delivery;
        if (!runtimeKeptCalls && (state === "waiting" || state === "held")) delivery.state = "dropped";
        if (runtimeKeptCalls && (state === "held" || (state === "sent" && delivery.sentAt >= resendAfter))) this.#deliver(record, delivery);
      }
      if (record.state === "running" && !record.deliveries.some((delivery) => delivery.state === "waiting")) orphans.push(record);
    }
    this.#abort(orphans, { kind: "disconnected", graceMs });
  }

  /**
   * The link opened for the first time: answers held because they settled before it was open (a
   * relay re-offers an unanswered call to a session while it is still connecting) are written now.
   */
  linkOpened(): void {
    if (this.#closeReason !== undefined) return;
    for (const record of this.#store.settledRecords()) {
      for (const delivery of record.deliveries) if (delivery.state === "held") this.#deliver(record, delivery);
    }
  }

  /** Settle every running call as `cancelled` (answered now) and clear every timer. Idempotent. */
  close(reason = "the session was closed"): void {
    if (this.#closeReason !== undefined) return;
    this.#closeReason = reason;
    this.#clearGrace();
    this.cancel(reason);
    this.#deadlines.clear();
    for (const record of this.#store.settledRecords()) {
      for (const delivery of record.deliveries) if (delivery.state === "held") delivery.state = "dropped";
    }
  }

  /** A known call asked for again under `request.requestId`. */
  #again(record: CallRecord, request: CallRequest): RequestDisposition {
    const known = record.delivery(request.requestId);
    if (known !== undefined) {
      // Asked again on a newer epoch after it was answered or dropped, or while its answer is held: answer it (once per epoch).
      if (known.state !== "held" && (known.state === "waiting" || known.epoch >= request.epoch)) return "duplicate";
      if (record.state === "running") {
        known.state = "waiting";
        known.epoch = request.epoch;
        return "joined";
      }
      this.#deliver(record, known);
      return record.state === "settled" ? "resent" : "expired";
    }
    const delivery: Delivery = { requestId: request.requestId, state: "waiting", epoch: request.epoch, sentAt: 0 };
    this.#store.addDelivery(record, delivery);
    if (record.journalClaim !== undefined) this.#journal?.alias(record, request.requestId);
    if (record.state === "running") return "joined";
    this.#deliver(record, delivery);
    return record.state === "settled" ? "replayed" : "expired";
  }

  /** `request.requestId` already stands for `owner`: the error at most once per epoch, nothing run. */
  #conflict(owner: CallRecord, request: CallRequest): RequestDisposition {
    const delivery = owner.delivery(request.requestId)!;
    if (delivery.state === "sent" && delivery.epoch >= request.epoch) return "conflict";
    const error = `Refused: request ${request.requestId} already stands for tool call ${owner.toolCallId}; one request id cannot carry a second call. Nothing was run.`;
    const epoch = this.#output.response(owner, request.requestId, { error });
    if (epoch !== undefined) this.#sent(delivery, epoch);
    return "conflict";
  }

  /** Preflight (a known tool, an input within `maxInputBytes`), then the tool's own input validation; `#execute` next. */
  #run(record: CallRecord, request: CallRequest): void {
    const { tool, inputBytes } = request;
    const limit = this.limits.maxInputBytes;
    if (tool === undefined)
      return void this.#settle(record, { kind: "unknown-tool", toolName: request.toolName, available: request.tools.names() });
    if (inputBytes > limit) return void this.#settle(record, { kind: "input-too-large", bytes: inputBytes, limit });
    const validation: InputValidation | Promise<InputValidation> = tool.validateInput(request.input);
    if (!(validation instanceof Promise)) return void this.#execute(record, tool, validation);
    const failed = (error: unknown) => [{ path: "(root)", message: `the input schema failed: ${String(error)}` }];
    validation.then(
      (checked) => this.#execute(record, tool, checked),
      (error: unknown) => this.#execute(record, tool, { ok: false, issues: failed(error) }),
    );
  }

  /** Checked input: refused, or asked about first (`needsApproval`), or run. */
  #execute(record: CallRecord, tool: ClientTool, checked: InputValidation): void {
    if (record.state !== "running") return;
    if (!checked.ok) return void this.#settle(record, { kind: "invalid-input", issues: checked.issues });
    if (tool.needsApproval === false) {
      if (this.#journal !== undefined) return void this.#claim(this.#journal, record, tool, checked.value);
      // #start's two lines, inline: this is every call's path (test/transport/call-path.test.ts counts its hops).
      this.#output.start(record, record.deliveries[0]!.requestId);
      return void executeTool(
        tool,
        checked.value,
        new CallContext(record, this.#progress),
        this.limits.maxResultChars,
        this.#executed,
        record,
      );
    }
    let needed: boolean | PromiseLike<boolean> = true;
    if (typeof tool.needsApproval === "function") {
      const { toolCallId, agentId, conversationId } = record;
      try {
        needed = tool.needsApproval(checked.value, { toolCallId, agentId, conversationId, idempotencyKey: record.idempotencyKey });
      } catch (error) {
        return void this.#deny(record, { kind: "denied", reason: "failed", message: `needsApproval threw: ${errorText(error)}` });
      }
    }
    if (typeof needed === "boolean")
      return void (needed ? this.#askFirst(record, tool, checked.value) : this.#start(record, tool, checked.value));
    Promise.resolve(needed).then(
      (answer) => {
        if (record.state !== "running") return;
        if (answer === true) this.#askFirst(record, tool, checked.value);
        else if (answer === false) this.#start(record, tool, checked.value);
        // Fail closed: an answer that is not a boolean is not a "no need to ask".
        else
          this.#deny(record, {
            kind: "denied",
            reason: "failed",
            message: `needsApproval answered ${describeAnswer(answer)}, not a boolean`,
          });
      },
      (error: unknown) => this.#deny(record, { kind: "denied", reason: "failed", message: `needsApproval failed: ${errorText(error)}` }),
    );
  }

  /** Ask the approver; the call waits `approvalTimeoutMs` at most (its own deadline starts when it is approved). */
  #askFirst(record: CallRecord, tool: ClientTool, input: unknown): void {
    if (this.#approve === undefined) return void this.#deny(record, { kind: "denied", reason: "no-approver", message: "" });
    record.approving = true;
    this.#deadlines.reschedule(record, this.limits.approvalTimeoutMs);
    let asked: Promise<ApprovalVerdict>;
    try {
      asked = this.#approve({ record, tool, input, signal: record.signal });
    } catch (error) {
      asked = Promise.resolve({ approved: false, reason: "failed", message: errorText(error) });
    }
    asked.then(
      (verdict) => this.#approved(record, tool, input, verdict),
      (error: unknown) => this.#approved(record, tool, input, { approved: false, reason: "failed", message: errorText(error) }),
    );
  }

  /** The approver answered: run (on the approved input, checked again if it changed), or settle `denied`. */
  #approved(record: CallRecord, tool: ClientTool, input: unknown, verdict: ApprovalVerdict): void {
    if (record.state !== "running" || !record.approving) return;
    if (!verdict.approved) return void this.#deny(record, { kind: "denied", reason: verdict.reason, message: verdict.message });
    record.approving = false;
    // What is left of the runtime's own wait (it counts from the request), in whole seconds (a
    // lane per distinct deadline), at most the tool's timeout.
    const left = RUNTIME_MAX_TOOL_TIMEOUT_MS - (this.#now() - record.startedAt);
    this.#deadlines.reschedule(record, Math.max(1_000, Math.min(record.timeoutMs, Math.floor(left / 1_000) * 1_000)));
    if (!("input" in verdict) || verdict.input === undefined) return void this.#start(record, tool, input);
    const validation = tool.validateInput(verdict.input);
    const run = (checked: InputValidation): void => {
      if (record.state !== "running") return;
      if (!checked.ok) return void this.#settle(record, { kind: "invalid-input", issues: checked.issues });
      this.#start(record, tool, checked.value);
    };
    if (!(validation instanceof Promise)) return void run(validation);
    validation.then(run, (error: unknown) =>
      run({ ok: false, issues: [{ path: "(root)", message: `the input schema failed: ${String(error)}` }] }),
    );
  }

  /** Not run: settle `denied` and fire the signal (an approval prompt still open can close). */
  #deny(record: CallRecord, outcome: CallOutcome & { kind: "denied" }): void {
    if (record.state !== "running") return;
    record.approving = false;
    this.#settle(record, outcome);
    record.abort(ToolCallAbortError.cancelled(`the call was not approved (${outcome.reason})`));
  }

  /** Record the call in the journal before its callback runs; it runs once the record is durable and the call is this table's. */
  #claim(journal: CallJournaling, record: CallRecord, tool: ClientTool, input: unknown): void {
    journal.claim(
      record,
      tool,
      input,
      this.origin + this.#now(),
      this.#steps(record, () => this.#start(record, tool, input)),
    );
  }

  /** What the table does with the journal's answer about `record`. */
  #steps(record: CallRecord, run: () => void): { run(): void; answer(outcome: CallOutcome): void } {
    return { run, answer: (outcome) => this.#settle(record, outcome) };
  }

  /** Run the tool on checked input (a method, so the pending call keeps no request alive); its outcome settles the call. */
  #start(record: CallRecord, tool: ClientTool, input: unknown): void {
    if (this.#journal !== undefined && record.journalClaim === undefined) return void this.#claim(this.#journal, record, tool, input);
    this.#output.start(record, record.deliveries[0]!.requestId);
    executeTool(tool, input, new CallContext(record, this.#progress), this.limits.maxResultChars, this.#executed, record);
  }

  #executed = (record: CallRecord, outcome: CallOutcome): void => {
    if (record.state === "running") this.#settle(record, outcome);
    else this.#output.late(record, record.deliveries[0]!.requestId, outcome);
  };

  #progress = (record: CallRecord, message: string): void => this.#output.progress(record, record.deliveries[0]!.requestId, message);

  /** Settle running calls whose callbacks may still run, and fire their signals (one reason for all). */
  #abort(records: readonly CallRecord[], outcome: AbortingOutcome): void {
    if (records.length === 0) return;
    const reason =
      outcome.kind === "timeout"
        ? ToolCallAbortError.timeout(outcome.timeoutMs)
        : outcome.kind === "cancelled"
          ? ToolCallAbortError.cancelled(outcome.reason)
          : ToolCallAbortError.disconnected(outcome.graceMs);
    for (const record of records) {
      if (record.state !== "running") continue;
      record.approving = false;
      this.#settle(record, outcome);
      record.abort(reason);
    }
  }

  /** The one way a call ends: state, cleanup, cache, deliveries, report. */
  #settle(record: CallRecord, outcome: CallOutcome): void {
    if (record.state !== "running") return;
    record.state = "settled";
    this.#deadlines.release(record);
    record.outcome = outcome;
    record.settledAt = this.#now();
    const annotations = record.tool?.annotations;
    record.tool = undefined;
    const safeToRetry = annotations?.readOnlyHint === true || annotations?.idempotentHint === true;
    this.#store.cache(record, responseForOutcome(outcome, { toolName: record.toolName, safeToRetry }));
    this.#journal?.settle(record, record.response!, this.origin + record.settledAt);
    for (const delivery of record.deliveries) if (delivery.state === "waiting") this.#deliver(record, delivery);
    this.#output.end(record, record.deliveries[0]!.requestId);
    // The app's value went out with the end report; the cache keeps the response, not the object.
    if (outcome.kind === "ok" && outcome.output !== undefined) delete outcome.output;
    if (this.#deadlines.size === 0) this.#clearGrace();
    this.#store.evict(record.settledAt);
  }

  /** Write the record's answer (or "outcome unknown" once forgotten) for `delivery`; held when it does not go out. */
  #deliver(record: CallRecord, delivery: Delivery): void {
    const epoch = this.#output.response(record, delivery.requestId, record.response ?? expiredResponse(record.toolCallId));
    if (epoch !== undefined) return void this.#sent(delivery, epoch);
    delivery.state = this.#closeReason === undefined && record.state === "settled" ? "held" : "dropped";
    if (delivery.state === "dropped" || this.#store.heldChars() <= this.limits.maxHeldChars) return;
    const kept = `The result of tool ${record.toolName} (${record.outcome!.kind}) was too large to keep while the client was disconnected. Inspect state before retrying.`;
    this.#store.cache(record, { error: kept });
  }

  #sent(delivery: Delivery, epoch: number): void {
    delivery.state = "sent";
    delivery.epoch = epoch;
    delivery.sentAt = this.#now();
  }

  #now(): number {
    return this.#timers.now() - this.origin;
  }

  #clearGrace(): void {
    if (this.#graceTimer !== undefined) this.#timers.clearTimeout(this.#graceTimer);
    this.#graceTimer = undefined;
  }
}

function describeAnswer(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.slice(0, 40));
  return value === null ? "null" : typeof value === "object" ? "an object" : String(value);
}
