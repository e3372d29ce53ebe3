/**
 * The `external_tool_call_request`s of one environment that no SDK has answered yet. The
 * listener never re-sends such a request (REAL-LISTENER.md §5), so the relay keeps it until the
 * answer passes through — across listener reconnects and SDK reconnects — bounded in count and age.
 */
import type { RelayLogger } from "./relay-options.js";
import type { SdkSession } from "./sdk-session.js";

export interface OutstandingCall {
  readonly requestId: string;
  /** The runtime the request names, if any. */
  readonly runtimeKey: string | undefined;
  /** The request exactly as the listener sent it. */
  readonly text: string;
  readonly createdAt: number;
  /** The SDK session asked to execute it (undefined while no suitable session exists). */
  owner: SdkSession | undefined;
  /** The `seq` it was delivered with on the owner's control channel. */
  deliveredSeq: number | undefined;
}

export interface OutstandingCallsOptions {
  maxCalls: number;
  ttlMs: number;
  logger: RelayLogger;
  /** For logs. */
  connectionId: string;
  now?: () => number;
}

export class OutstandingCalls {
  private readonly calls = new Map<string, OutstandingCall>();
  private readonly options: OutstandingCallsOptions;
  private readonly now: () => number;

  constructor(options: OutstandingCallsOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.calls.size;
  }

  /** Remembers a request (a repeated request id replaces the older entry). */
  add(requestId: string, runtimeKey: string | undefined, text: string): OutstandingCall {
    this.sweep();
    this.calls.delete(requestId);
    const call: OutstandingCall = { requestId, runtimeKey, text, createdAt: this.now(), owner: undefined, deliveredSeq: undefined };
    this.calls.set(requestId, call);
    while (this.calls.size > this.options.maxCalls) {
      const oldest = this.calls.keys().next().value as string;
      this.calls.delete(oldest);
      this.options.logger.warn("relay: outstanding call table full; oldest request forgotten", {
        connectionId: this.options.connectionId,
        requestId: oldest,
      });
    }
    return call;
  }

  get(requestId: string): OutstandingCall | undefined {
    return this.calls.get(requestId);
  }

  /** Removes and returns the call answered by `requestId`. */
  take(requestId: string): OutstandingCall | undefined {
    const call = this.calls.get(requestId);
    if (call) this.calls.delete(requestId);
    return call;
  }

  /** Calls in arrival order. */
  list(): OutstandingCall[] {
    return [...this.calls.values()];
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
    const cutoff = this.now() - this.options.ttlMs;
    for (const call of this.calls.values()) {
      if (call.createdAt > cutoff) break;
      this.calls.delete(call.requestId);
      this.options.logger.debug("relay: outstanding call expired unanswered", {
        connectionId: this.options.connectionId,
        requestId: call.requestId,
      });
    }
  }

  clear(): void {
    this.calls.clear();
  }
}
