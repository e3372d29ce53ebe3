/**
 * One registered environment: the listener's connection, the SDK sessions attached to it, and
 * the routing between them (docs/relay.md "Routing rules"). Outstanding tool calls live here,
 * so an answer reaches whatever listener socket the environment has when it arrives.
 */
import { randomUUID } from "node:crypto";
import type { WebSocket } from "ws";
import { ListenerConnection, type ListenerSocketParams } from "./listener-connection.js";
import type { RelayEmit, RelayEnvironmentInfo } from "./relay-events.js";
import type { ResolvedRelayOptions } from "./relay-options.js";
import {
  channelForType,
  isResponseType,
  PONG_FRAME,
  readFrameFacts,
  toolRegistrationOf,
  type Channel,
  type FrameFacts,
} from "./relay-routing.js";
import { SdkSession } from "./sdk-session.js";
import { ToolCallRouter } from "./tool-call-router.js";

export interface EnvironmentIdentity {
  id: string;
  connectionId: string;
  deviceId: string;
  listenerInstanceId: string | undefined;
  connectionName: string;
}

interface RequestOwner {
  session: SdkSession;
  /** The request was a `runtime_start` with tools whose runtime the response will name. */
  registersTools: boolean;
}

/** How long an anonymous SDK socket waits for its partner channel. */
const ANONYMOUS_PAIRING_MS = 10_000;

/** SDK request ids remembered per environment for routing their answers. */
const MAX_REQUEST_OWNERS = 10_000;

export class Environment {
  readonly identity: EnvironmentIdentity;
  readonly registeredAt = new Date();
  readonly listener: ListenerConnection;
  private readonly sessions = new Map<string, SdkSession>();
  private readonly toolCalls: ToolCallRouter;
  private readonly requestOwners = new Map<string, RequestOwner>();
  private readonly sessionTimers = new Map<SdkSession, NodeJS.Timeout>();
  private graceTimer: NodeJS.Timeout | undefined;
  private removed = false;

  constructor(
    identity: EnvironmentIdentity,
    private readonly options: ResolvedRelayOptions,
    private readonly emit: RelayEmit,
    private readonly onExpired: (environment: Environment) => void,
  ) {
    this.identity = identity;
    const { connectionId } = identity;
    this.toolCalls = new ToolCallRouter({ connectionId, options, sessions: () => this.sessions.values() });
    this.listener = new ListenerConnection({
      connectionId,
      maxQueuedCommands: options.maxQueuedCommands,
      logger: options.logger,
      onFrame: (text, facts, channel) => this.handleListenerFrame(text, facts, channel),
      onReady: () => {
        this.stopGraceTimer();
        options.logger.info("relay: listener ready", { connectionId, mode: this.listener.mode });
        emit("listener-ready", connectionId);
      },
      onDown: (code) => {
        options.logger.info("relay: listener disconnected", { connectionId, code });
        emit("listener-down", connectionId, code);
        if (!this.removed) this.startGraceTimer();
      },
    });
    this.startGraceTimer();
  }

  get isRemoved(): boolean {
    return this.removed;
  }

  attachListener(socket: WebSocket, params: ListenerSocketParams): void {
    this.listener.attach(socket, params);
  }

  /**
   * Attaches an SDK status socket to the session named `identity` (created or resumed). Without
   * an identity the socket pairs with the oldest anonymous session still missing this channel
   * (opened within the last {@link ANONYMOUS_PAIRING_MS}); such sessions cannot be resumed.
   */
  attachSdk(socket: WebSocket, channel: Channel, identity: string | undefined, runtimeKey: string | undefined): SdkSession {
    let session = identity === undefined ? this.anonymousPartner(channel) : this.sessions.get(identity);
    if (!session) {
      session = new SdkSession({
        identity: identity ?? `anonymous:${randomUUID()}`,
        anonymous: identity === undefined,
        maxUnackedFrames: this.options.maxUnackedFrames,
        logger: this.options.logger,
        onDetached: (detached) => this.startSessionTimer(detached),
      });
      this.sessions.set(session.identity, session);
    }
    const attached = session;
    this.stopSessionTimer(attached);
    if (runtimeKey) attached.subscriptions.add(runtimeKey);
    socket.on("message", (data, isBinary) => {
      if (!isBinary) this.handleSdkFrame(attached, channel, socket, data.toString());
    });
    socket.on("close", () => {
      attached.detach(channel, socket);
      this.emit("sdk-detached", { connectionId: this.identity.connectionId, sessionId: attached.id, channel });
    });
    socket.on("error", () => {
      // followed by close
    });
    const redelivered = attached.attach(channel, socket);
    if (channel === "control") this.toolCalls.resume(attached);
    else this.toolCalls.offerUnowned();
    this.emit("sdk-attached", { connectionId: this.identity.connectionId, sessionId: attached.id, channel, redelivered });
    return attached;
  }

  private anonymousPartner(channel: Channel): SdkSession | undefined {
    const cutoff = Date.now() - ANONYMOUS_PAIRING_MS;
    for (const session of this.sessions.values()) {
      if (session.anonymous && session.attached && !session.hasEverAttached(channel) && session.createdAt >= cutoff) return session;
    }
    return undefined;
  }

  /** A frame from a current listener socket. */
  private handleListenerFrame(text: string, facts: FrameFacts, socketChannel: Channel | undefined): void {
    const channel = socketChannel ?? channelForType(facts.type);
    const { connectionId } = this.identity;
    if (facts.type === "external_tool_call_request" && facts.requestId) {
      const delivered = this.toolCalls.request(facts.requestId, facts.runtimeKey, text);
      this.emit("tool-call-requested", { connectionId, requestId: facts.requestId, delivered });
      return;
    }
    const owner = facts.requestId ? this.requestOwners.get(facts.requestId) : undefined;
    if (owner && facts.requestId && isResponseType(facts.type)) this.requestOwners.delete(facts.requestId);
    if (owner && !owner.session.isClosed) {
      if (facts.type === "runtime_start_response" && facts.body.success === true && facts.runtimeKey) {
        if (owner.registersTools) this.toolCalls.registerRuntime(owner.session, facts.runtimeKey);
        this.subscribe(owner.session, facts.runtimeKey);
      }
      owner.session.deliver(channel, text);
      return;
    }
    const targets = [...this.sessions.values()].filter(
      (session) => facts.runtimeKey === undefined || session.subscriptions.has(facts.runtimeKey),
    );
    if (targets.length === 0) {
      this.options.logger.debug("relay: listener frame has no SDK subscriber", { connectionId, type: facts.type });
    }
    for (const session of targets) session.deliver(channel, text);
  }

  /** A frame from an SDK socket. Pings and acks stay here; commands go to the listener's control socket. */
  private handleSdkFrame(session: SdkSession, channel: Channel, socket: WebSocket, text: string): void {
    const { connectionId } = this.identity;
    const facts = readFrameFacts(text);
    if (!facts) {
      this.options.logger.debug("relay: unreadable SDK frame dropped", { connectionId, session: session.id });
      return;
    }
    if (facts.type === "ping") {
      if (this.options.respondToJsonPings) socket.send(PONG_FRAME);
      return;
    }
    if (facts.type === "ack") {
      if (typeof facts.body.seq === "number") session.acknowledge(channel, facts.body.seq);
      return;
    }
    if (channel === "stream") {
      this.options.logger.debug("relay: command on an SDK stream socket dropped", { connectionId, type: facts.type });
      return;
    }
    if (facts.type === "external_tool_call_response") {
      const call = this.toolCalls.answer(facts.requestId);
      if (!call) {
        this.options.logger.debug("relay: answer for an unknown tool call dropped", { connectionId, requestId: facts.requestId });
        return;
      }
      const delivery = this.listener.sendCommand(text);
      this.emit("tool-call-answered", { connectionId, requestId: call.requestId, delivery });
      return;
    }
    if (facts.runtimeKey) this.subscribe(session, facts.runtimeKey);
    const registration = toolRegistrationOf(facts);
    if (facts.requestId) {
      const registersTools = facts.type === "runtime_start" && registration?.registersAny === true && !facts.runtimeKey;
      this.rememberRequestOwner(facts.requestId, { session, registersTools });
    }
    this.listener.sendCommand(text);
    if (registration) this.toolCalls.applyRegistration(session, registration);
  }

  /** Frames of `runtimeKey` go to `session` from now on (and calls waiting for such a session go to it). */
  private subscribe(session: SdkSession, runtimeKey: string): void {
    if (session.subscriptions.has(runtimeKey)) return;
    session.subscriptions.add(runtimeKey);
    this.toolCalls.offerUnowned();
  }

  private rememberRequestOwner(requestId: string, owner: RequestOwner): void {
    this.requestOwners.delete(requestId);
    this.requestOwners.set(requestId, owner);
    if (this.requestOwners.size > MAX_REQUEST_OWNERS) {
      this.requestOwners.delete(this.requestOwners.keys().next().value as string);
    }
  }

  private startSessionTimer(session: SdkSession): void {
    this.stopSessionTimer(session);
    const window = session.anonymous ? 0 : this.options.sdkResumeWindowMs;
    const timer = setTimeout(() => this.expireSession(session), window);
    timer.unref();
    this.sessionTimers.set(session, timer);
  }

  private stopSessionTimer(session: SdkSession): void {
    const timer = this.sessionTimers.get(session);
    if (timer) clearTimeout(timer);
    this.sessionTimers.delete(session);
  }

  /** The resume window passed: the session is gone; its unanswered calls go to another session. */
  private expireSession(session: SdkSession): void {
    this.sessionTimers.delete(session);
    if (session.attached || this.sessions.get(session.identity) !== session) return;
    this.sessions.delete(session.identity);
    session.close(1001, "Session expired");
    this.toolCalls.sessionGone(session);
    this.options.logger.debug("relay: SDK session expired", { connectionId: this.identity.connectionId, session: session.id });
  }

  private startGraceTimer(): void {
    this.stopGraceTimer();
    this.graceTimer = setTimeout(() => this.onExpired(this), this.options.environmentGraceMs);
    this.graceTimer.unref();
  }

  private stopGraceTimer(): void {
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.graceTimer = undefined;
  }

  /** Closes every SDK socket of the environment with `code`; returns how many sockets were closed. */
  dropSdkSockets(code: number, reason: string): number {
    let closed = 0;
    for (const session of this.sessions.values()) {
      for (const socket of session.sockets()) {
        socket.close(code, reason);
        closed++;
      }
    }
    return closed;
  }

  /** Cuts every SDK socket of the environment without a close frame; returns how many. */
  terminateSdkSockets(): number {
    let cut = 0;
    for (const session of this.sessions.values()) {
      for (const socket of session.sockets()) {
        socket.terminate();
        cut++;
      }
    }
    return cut;
  }

  /**
   * Ends the environment: listener sockets closed with `listenerCode` (if any are open), SDK
   * sockets with `sdkCode`, everything held is dropped. Idempotent.
   */
  remove(listenerCode: number, sdkCode: number, reason: string): void {
    if (this.removed) return;
    this.removed = true;
    this.stopGraceTimer();
    for (const timer of this.sessionTimers.values()) clearTimeout(timer);
    this.sessionTimers.clear();
    this.listener.close(listenerCode, reason);
    this.listener.discardQueue();
    for (const session of this.sessions.values()) session.close(sdkCode, reason);
    this.sessions.clear();
    this.toolCalls.clear();
    this.requestOwners.clear();
  }

  /** Forgets calls the listener can no longer answer (a fresh registration means a fresh listener runtime). */
  forgetOutstandingCalls(): void {
    this.toolCalls.clearCalls();
  }

  /** Periodic housekeeping. */
  sweep(): void {
    this.toolCalls.sweep();
  }

  info(): RelayEnvironmentInfo {
    return {
      ...this.identity,
      registeredAt: this.registeredAt.toISOString(),
      connectedAt: this.listener.ready ? this.listener.connectedAt?.toISOString() : undefined,
      listenerConnected: this.listener.ready,
      listenerMode: this.listener.ready ? this.listener.mode : undefined,
      sdkSessions: this.sessions.size,
      outstandingCalls: this.toolCalls.pending(),
      queuedCommands: this.listener.queuedCommands,
    };
  }
}
