/**
 * Who executes an environment's tool calls, and keeping each call until it is answered.
 * Owner rule: among the sessions bound to the call's runtime, the one that registered tools for
 * it last; else the most recently attached one. Nobody else is ever offered the call, and only
 * its owner's answer reaches the listener. A call with no owner waits (bounded by
 * `unownedCallTimeoutMs`); then the listener gets an `external_tool_call_response` with an error.
 */
import { unrefTimer, type TimerHandle, type Timers } from "toolrelay/protocol";
import { OutstandingCalls, type OutstandingCall } from "./outstanding-calls.js";
import { RelayFrame } from "./relay-frame.js";
import type { ResolvedRelayOptions } from "./relay-options.js";
import type { SdkSession } from "./sdk-session.js";
import type { Tenant } from "./tenant.js";

export interface ToolCallRouterOptions {
  connectionId: string;
  tenant: Tenant;
  options: ResolvedRelayOptions;
  /** The environment's current sessions (attached or inside their resume window). */
  sessions(): Iterable<SdkSession>;
  /** Sends a frame the relay wrote itself to the listener (queued while it is away). */
  answerListener(frame: RelayFrame): void;
  /** The relay answered a call to the listener with an error (no owner, over the cap, …). */
  onFailed(requestId: string, reason: string): void;
  /** The registrant of `runtimeKey` changed (`identity` undefined: cleared). Cluster mode records it. */
  onRegistrant?: ((runtimeKey: string, identity: string | undefined) => void) | undefined;
}

/** What became of an `external_tool_call_request`. */
export type CallOutcome = "delivered" | "waiting" | "refused";

/** The error a relay-written `external_tool_call_response` carries. */
export function toolCallErrorFrame(requestId: string, error: string): RelayFrame {
  return RelayFrame.read(JSON.stringify({ type: "external_tool_call_response", request_id: requestId, error }))!;
}

/** An attached session beats a detached one; then the one attached last. */
function isMoreRecent(candidate: SdkSession, current: SdkSession): boolean {
  if (candidate.attached !== current.attached) return candidate.attached;
  return candidate.lastAttachedAt > current.lastAttachedAt;
}

export class ToolCallRouter {
  #calls: OutstandingCalls;
  /** runtime key → identity of the session that registered tools for it last (an identity outlives a session object: a resumed or moved session has a new one). */
  #registrants = new Map<string, string>();
  /**
   * Cluster mode, after a takeover: until then a restored registrant that has not reconnected yet
   * still owns its runtime's calls (as its session would on one relay, inside its resume window).
   */
  #registrantsAwaitedUntil = 0;
  #awaitTimer: TimerHandle | undefined;
  #config: ToolCallRouterOptions;
  #timers: Timers;

  constructor(config: ToolCallRouterOptions) {
    this.#config = config;
    this.#timers = config.options.timers;
    this.#calls = new OutstandingCalls({
      tenant: config.tenant,
      ttlMs: config.options.outstandingCallTtlMs,
      timers: config.options.timers,
      logger: config.options.logger,
      connectionId: config.connectionId,
    });
  }

  /** Request ids not answered yet, oldest first. */
  pending(): string[] {
    return this.#calls.list().map((call) => call.requestId);
  }

  /** A listener's `external_tool_call_request`: remembered, and handed to its owner if there is one. */
  request(frame: RelayFrame): CallOutcome {
    const requestId = frame.requestId!;
    if (frame.runtimeKey === undefined) {
      this.#fail(requestId, "relay: the external_tool_call_request names no runtime, so no SDK session can own it");
      return "refused";
    }
    const call = this.#calls.add(requestId, frame.runtimeKey, frame);
    if (!call) {
      const limit = this.#config.tenant.limit("outstandingCall");
      this.#fail(requestId, `relay: the tenant already has ${limit} unanswered tool calls (maxOutstandingCallsPerTenant)`);
      return "refused";
    }
    return this.#deliver(call) ? "delivered" : "waiting";
  }

  /**
   * An SDK's answer: the call it closes, or the reason it is refused — an unknown (or already
   * answered) request id, or a session that does not own the call.
   */
  answer(session: SdkSession, requestId: string | undefined): { call: OutstandingCall } | { refused: "unknown" | "not-owner" } {
    const call = requestId === undefined ? undefined : this.#calls.get(requestId);
    if (!call) return { refused: "unknown" };
    if (call.owner !== session) return { refused: "not-owner" };
    this.#calls.remove(call);
    return { call };
  }

  /** `session` registered tools for `runtimeKey` (it is bound to it): it is preferred for its calls. */
  registered(session: SdkSession, runtimeKey: string): void {
    if (this.#registrants.get(runtimeKey) === session.identity) return;
    this.#registrants.set(runtimeKey, session.identity);
    this.#config.onRegistrant?.(runtimeKey, session.identity);
  }

  /** The tools of `runtimeKey` were replaced by a command without tools. */
  cleared(runtimeKey: string): void {
    if (!this.#registrants.delete(runtimeKey)) return;
    this.#config.onRegistrant?.(runtimeKey, undefined);
  }

  /**
   * Cluster mode, a node taking the environment over: the registrants and the outstanding calls
   * it read from the shared store. The calls wait for (or go to) their owner as if just requested.
   */
  restore(registrants: ReadonlyMap<string, string>, calls: Iterable<{ requestId: string; runtimeKey: string; frame: RelayFrame }>): void {
    for (const [runtimeKey, identity] of registrants) this.#registrants.set(runtimeKey, identity);
    if (registrants.size > 0) {
      const windowMs = this.#config.options.sdkResumeWindowMs;
      this.#registrantsAwaitedUntil = this.#timers.now() + windowMs;
      if (this.#awaitTimer !== undefined) this.#timers.clearTimeout(this.#awaitTimer);
      this.#awaitTimer = this.#timers.setTimeout(() => {
        this.#awaitTimer = undefined;
        this.offerUnowned();
      }, windowMs);
      unrefTimer(this.#awaitTimer);
    }
    for (const { requestId, runtimeKey, frame } of calls) {
      const call = this.#calls.add(requestId, runtimeKey, frame, { restored: true });
      if (call) this.#deliver(call);
    }
  }

  /** `session` is bound to a runtime now: calls of that runtime waiting for an owner go to it. */
  sessionBound(): void {
    this.offerUnowned();
  }

  /**
   * After a control socket (re)attached: every unanswered call it owns goes out again, unless the
   * session still holds it for redelivery. Acknowledged ones too: an ack only says the frame
   * reached the SDK's socket, not that it survived the drop; the SDK deduplicates by tool call
   * (a call it runs or ran is joined or replayed, never run twice).
   */
  resume(session: SdkSession): void {
    for (const call of this.#calls.ownedBy(session)) {
      const seq = call.deliveredSeq;
      if (seq !== undefined && session.isHeld("control", seq)) continue;
      call.deliveredSeq = session.deliver("control", call.frame);
    }
    this.offerUnowned();
  }

  /** A session closed: its calls go to another session of their runtime, or wait for one. */
  sessionGone(session: SdkSession): void {
    for (const [runtimeKey, registrant] of this.#registrants) if (registrant === session.identity) this.cleared(runtimeKey);
    for (const call of this.#calls.ownedBy(session)) call.owner = undefined;
    this.offerUnowned();
  }

  /** Hands every call without a live owner to the owner the rule picks now (if any). */
  offerUnowned(): void {
    for (const call of this.#calls.unowned()) this.#deliver(call);
  }

  sweep(): void {
    this.#calls.sweep();
  }

  /** Forgets every call and registration (environment removed, or a fresh listener runtime). */
  clear(): void {
    this.#calls.clear();
    this.#registrants.clear();
    if (this.#awaitTimer !== undefined) this.#timers.clearTimeout(this.#awaitTimer);
    this.#awaitTimer = undefined;
  }

  /** Forgets the calls only (a fresh listener runtime cannot answer them). */
  clearCalls(): void {
    this.#calls.clear();
  }

  #chooseOwner(runtimeKey: string): SdkSession | undefined {
    const registrant = this.#registrants.get(runtimeKey);
    let best: SdkSession | undefined;
    for (const session of this.#config.sessions()) {
      if (session.isClosed || session.runtimeKey !== runtimeKey) continue;
      if (session.identity === registrant) return session;
      if (!best || isMoreRecent(session, best)) best = session;
    }
    return this.#awaitsRegistrant(registrant) ? undefined : best;
  }

  /** Whether a restored registrant that has not reconnected yet still owns its runtime's calls. */
  #awaitsRegistrant(registrant: string | undefined): boolean {
    return registrant !== undefined && this.#timers.now() < this.#registrantsAwaitedUntil;
  }

  /** Hands a call to its owner's control channel; without one, the call waits (bounded). Returns whether it found an owner. */
  #deliver(call: OutstandingCall): boolean {
    const owner = this.#chooseOwner(call.runtimeKey);
    if (owner) {
      const seq = owner.deliver("control", call.frame);
      if (seq !== undefined) {
        call.owner = owner;
        call.deliveredSeq = seq;
        if (call.unownedTimer !== undefined) this.#timers.clearTimeout(call.unownedTimer);
        call.unownedTimer = undefined;
        return true;
      }
      // The delivery closed the owner (over its byte bound); closing it offered this call again.
      if (call.owner && !call.owner.isClosed) return true;
    }
    call.owner = undefined;
    call.deliveredSeq = undefined;
    // Owned by its registrant still (restored, inside the resume window): no unowned deadline yet.
    if (this.#awaitsRegistrant(this.#registrants.get(call.runtimeKey))) return false;
    if (call.unownedTimer === undefined) {
      this.#config.options.logger.debug("relay: tool call waits for an SDK session of its runtime", {
        connectionId: this.#config.connectionId,
        requestId: call.requestId,
      });
      call.unownedTimer = this.#timers.setTimeout(() => this.#expireUnowned(call), this.#config.options.unownedCallTimeoutMs);
      unrefTimer(call.unownedTimer);
    }
    return false;
  }

  #expireUnowned(call: OutstandingCall): void {
    call.unownedTimer = undefined;
    if (this.#calls.get(call.requestId) !== call || (call.owner && !call.owner.isClosed)) return;
    this.#calls.remove(call);
    const waited = this.#config.options.unownedCallTimeoutMs;
    this.#fail(
      call.requestId,
      `relay: no SDK session attached to this call's runtime within ${waited} ms (unownedCallTimeoutMs); the call was not run`,
    );
  }

  #fail(requestId: string, error: string): void {
    this.#config.options.logger.info("relay: tool call answered with an error by the relay", {
      connectionId: this.#config.connectionId,
      requestId,
    });
    this.#config.answerListener(toolCallErrorFrame(requestId, error));
    this.#config.onFailed(requestId, error);
  }
}
