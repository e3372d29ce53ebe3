/**
 * Who executes an environment's tool calls, and keeping each call until it is answered.
 * Owner rule: the session that registered tools for the call's runtime; else the most recently
 * attached session subscribed to that runtime; else the last session that registered tools on
 * the environment; else nobody yet (the call waits for such a session to appear).
 */
import { OutstandingCalls, type OutstandingCall } from "./outstanding-calls.js";
import type { ResolvedRelayOptions } from "./relay-options.js";
import type { ToolRegistration } from "./relay-routing.js";
import type { SdkSession } from "./sdk-session.js";

export interface ToolCallRouterOptions {
  connectionId: string;
  options: ResolvedRelayOptions;
  /** The environment's current sessions (attached or inside their resume window). */
  sessions(): Iterable<SdkSession>;
}

export class ToolCallRouter {
  private readonly calls: OutstandingCalls;
  private readonly registrants = new Map<string, SdkSession>();
  private lastRegistrant: SdkSession | undefined;
  private readonly config: ToolCallRouterOptions;

  constructor(config: ToolCallRouterOptions) {
    this.config = config;
    this.calls = new OutstandingCalls({
      maxCalls: config.options.maxOutstandingCalls,
      ttlMs: config.options.outstandingCallTtlMs,
      logger: config.options.logger,
      connectionId: config.connectionId,
    });
  }

  /** Request ids not answered yet, oldest first. */
  pending(): string[] {
    return this.calls.list().map((call) => call.requestId);
  }

  /** A listener's `external_tool_call_request`: remembered, and handed to an owner if there is one. */
  request(requestId: string, runtimeKey: string | undefined, text: string): boolean {
    return this.deliver(this.calls.add(requestId, runtimeKey, text));
  }

  /** An SDK's answer: the call it closes, or undefined for an unknown (or already answered) request id. */
  answer(requestId: string | undefined): OutstandingCall | undefined {
    return requestId === undefined ? undefined : this.calls.take(requestId);
  }

  /** Applies the tool-registration effects of an SDK command. */
  applyRegistration(session: SdkSession, registration: ToolRegistration): void {
    for (const key of registration.registered) this.registrants.set(key, session);
    for (const key of registration.cleared) {
      if (this.registrants.get(key) === session) this.registrants.delete(key);
    }
    if (registration.registersAny) {
      this.lastRegistrant = session;
      this.offerUnowned();
    }
  }

  /** A `runtime_start` with tools whose runtime only its response named. */
  registerRuntime(session: SdkSession, runtimeKey: string): void {
    this.registrants.set(runtimeKey, session);
    this.offerUnowned();
  }

  /**
   * After a control socket (re)attached: every unanswered call it owns goes out again, unless the
   * session still holds it for redelivery. Acknowledged ones too: an ack only says the frame
   * reached the SDK's socket, not that it survived the drop; the SDK deduplicates by tool call
   * (a call it runs or ran is joined or replayed, never run twice).
   */
  resume(session: SdkSession): void {
    for (const call of this.calls.ownedBy(session)) {
      const seq = call.deliveredSeq;
      if (seq !== undefined && session.isHeld("control", seq)) continue;
      call.deliveredSeq = session.deliver("control", call.text);
    }
    this.offerUnowned();
  }

  /** A session's resume window ended: its calls go to another owner if one exists. */
  sessionGone(session: SdkSession): void {
    for (const call of this.calls.ownedBy(session)) call.owner = undefined;
    this.offerUnowned();
  }

  /** Hands every call without a live owner to the owner the rule picks now (if any). */
  offerUnowned(): void {
    for (const call of this.calls.unowned()) this.deliver(call);
  }

  sweep(): void {
    this.calls.sweep();
  }

  /** Forgets every call and registration (environment removed, or a fresh listener runtime). */
  clear(): void {
    this.calls.clear();
    this.registrants.clear();
    this.lastRegistrant = undefined;
  }

  /** Forgets the calls only (a fresh listener runtime cannot answer them). */
  clearCalls(): void {
    this.calls.clear();
  }

  private isLive(session: SdkSession | undefined): session is SdkSession {
    if (session === undefined || session.isClosed) return false;
    for (const current of this.config.sessions()) if (current === session) return true;
    return false;
  }

  private chooseOwner(runtimeKey: string | undefined): SdkSession | undefined {
    if (runtimeKey) {
      const registrant = this.registrants.get(runtimeKey);
      if (this.isLive(registrant)) return registrant;
      const subscribed = [...this.config.sessions()]
        .filter((session) => !session.isClosed && session.subscriptions.has(runtimeKey))
        .sort((a, b) => Number(b.attached) - Number(a.attached) || b.lastAttachedAt - a.lastAttachedAt);
      if (subscribed[0]) return subscribed[0];
    }
    return this.isLive(this.lastRegistrant) ? this.lastRegistrant : undefined;
  }

  /** Hands a call to its owner's control channel. Returns false while nobody can take it. */
  private deliver(call: OutstandingCall): boolean {
    const owner = this.chooseOwner(call.runtimeKey);
    call.owner = owner;
    call.deliveredSeq = owner?.deliver("control", call.text);
    if (!owner) {
      this.config.options.logger.debug("relay: tool call waits for an SDK session", {
        connectionId: this.config.connectionId,
        requestId: call.requestId,
      });
    }
    return owner !== undefined;
  }
}
