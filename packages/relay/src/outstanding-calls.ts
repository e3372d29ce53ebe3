/**
 * The `external_tool_call_request`s of one environment that no SDK has answered yet. The
 * listener never re-sends such a request, so the relay keeps it until the answer passes through
 * — across listener reconnects and SDK reconnects — bounded by the tenant's cap and by age.
 */
import type { TimerHandle, Timers } from "toolrelay/protocol";
import type { RelayFrame } from "./relay-frame.js";
import type { RelayLogger } from "./relay-options.js";
import type { SdkSession } from "./sdk-session.js";
import type { Tenant } from "./tenant.js";

export interface OutstandingCall {
  readonly requestId: string;
  /** The runtime the request names (a request without one is refused before it gets here). */
  readonly runtimeKey: string;
  /** The request exactly as the listener sent it. */
  readonly frame: RelayFrame;
  readonly createdAt: number;
  /** The SDK session asked to execute it (undefined while no session is bound to its runtime). */
  owner: SdkSession | undefined;
  /** The `seq` it was delivered with on the owner's control channel. */
  deliveredSeq: number | undefined;
  /** Runs out while the call has no owner. */
  unownedTimer: TimerHandle | undefined;
}

export interface OutstandingCallsOptions {
  tenant: Tenant;
  ttlMs: number;
  timers: Timers;
  logger: RelayLogger;
  /** For logs. */
  connectionId: string;
}

export class OutstandingCalls {
  #calls = new Map<string, OutstandingCall>();
  #options: OutstandingCallsOptions;

  constructor(options: OutstandingCallsOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#calls.size;
  }

  /**
   * Remembers a request (a repeated request id replaces the older entry). `undefined` when the
   * tenant is at its outstanding-call cap: the request is not kept. `restored`: cluster mode, a
   * call the tenant already holds in the cluster, taken over by this node (not checked against the cap).
   */
  add(requestId: string, runtimeKey: string, frame: RelayFrame, options: { restored?: boolean } = {}): OutstandingCall | undefined {
    this.sweep();
    const previous = this.#calls.get(requestId);
    if (previous) this.#forget(previous, false);
    else if (options.restored) this.#options.tenant.take("outstandingCall");
    else if (!this.#options.tenant.reserve("outstandingCall")) return undefined;
    const call: OutstandingCall = {
      requestId,
      runtimeKey,
      frame: frame.retain(),
      createdAt: this.#options.timers.now(),
      owner: undefined,
      deliveredSeq: undefined,
      unownedTimer: undefined,
    };
    this.#calls.set(requestId, call);
    return call;
  }

  get(requestId: string): OutstandingCall | undefined {
    return this.#calls.get(requestId);
  }

  /** Removes a call (answered, or given up on). */
  remove(call: OutstandingCall): void {
    if (this.#calls.get(call.requestId) !== call) return;
    this.#forget(call, true);
  }

  /** Calls in arrival order. */
  list(): OutstandingCall[] {
    return [...this.#calls.values()];
  }

  ownedBy(session: SdkSession): OutstandingCall[] {
    return this.list().filter((call) => call.owner === session);
  }

  /** Calls no live session owns. */
  unowned(): OutstandingCall[] {
    return this.list().filter((call) => call.owner === undefined || call.owner.isClosed);
  }

  /** Forgets calls older than the TTL (the listener gave up on them long ago). */
  sweep(): void {
    const cutoff = this.#options.timers.now() - this.#options.ttlMs;
    for (const call of this.#calls.values()) {
      if (call.createdAt > cutoff) break;
      this.#forget(call, true);
      this.#options.logger.debug("relay: outstanding call expired unanswered", {
        connectionId: this.#options.connectionId,
        requestId: call.requestId,
      });
    }
  }

  clear(): void {
    for (const call of this.list()) this.#forget(call, true);
  }

  #forget(call: OutstandingCall, release: boolean): void {
    this.#calls.delete(call.requestId);
    if (call.unownedTimer !== undefined) this.#options.timers.clearTimeout(call.unownedTimer);
    call.unownedTimer = undefined;
    if (release) this.#options.tenant.release("outstandingCall");
  }
}
