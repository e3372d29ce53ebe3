/**
 * One registered environment, owned by one tenant: the listener's connection, the SDK sessions
 * attached to it, and the routing between them (docs/relay.md "Routing rules"). Outstanding tool
 * calls live here, so an answer reaches whatever listener socket the environment has when it
 * arrives.
 */
import { randomUUID } from "node:crypto";
import type { WebSocket } from "ws";
import { unrefTimer, type TimerHandle } from "../internal/timers.js";
import type { FairScheduler } from "./fair-scheduler.js";
import { InboundQueue } from "./inbound-queue.js";
import { ListenerConnection, type ListenerSocketParams } from "./listener-connection.js";
import type { RelayEmit, RelayEnvironmentInfo } from "./relay-events.js";
import type { RelayFrame } from "./relay-frame.js";
import type { ResolvedRelayOptions } from "./relay-options.js";
import { routeListenerFrame } from "./listener-frames.js";
import type { Channel } from "./relay-routing.js";
import { RequestOwners } from "./request-owners.js";
import { mergeBinding, type RuntimeBinding } from "./runtime-binding.js";
import { SdkCommands } from "./sdk-commands.js";
import { SdkSession } from "./sdk-session.js";
import type { Principal } from "./tenant-directory.js";
import type { Tenant } from "./tenant.js";
import { ToolCallRouter } from "./tool-call-router.js";

export interface EnvironmentIdentity {
  id: string;
  connectionId: string;
  deviceId: string;
  listenerInstanceId: string | undefined;
  connectionName: string;
  /** Set when a sandbox's listener registered the environment. */
  sandboxId: string | undefined;
}

export interface EnvironmentContext {
  options: ResolvedRelayOptions;
  scheduler: FairScheduler;
  emit: RelayEmit;
  /** The listener stayed away past the grace period. */
  onExpired(environment: Environment): void;
}

/** Why an SDK socket may not attach (answered to the upgrade with `status`). */
export interface SdkAttachRefusal {
  status: number;
  message: string;
  kind: "session-bound-elsewhere" | "tenant-limit";
}

/** How long an anonymous SDK socket waits for its partner channel. */
const ANONYMOUS_PAIRING_MS = 10_000;

export class Environment {
  readonly identity: EnvironmentIdentity;
  readonly tenant: Tenant;
  readonly registeredAt: Date;
  readonly listener: ListenerConnection;
  #context: EnvironmentContext;
  #sessions = new Map<string, SdkSession>();
  #router: ToolCallRouter;
  #requests = new RequestOwners();
  #commands: SdkCommands;
  #sdkQueues = new Set<InboundQueue>();
  #graceTimer: TimerHandle | undefined;
  #removed = false;

  constructor(identity: EnvironmentIdentity, tenant: Tenant, context: EnvironmentContext) {
    this.identity = identity;
    this.tenant = tenant;
    this.#context = context;
    const { options, emit } = context;
    this.registeredAt = new Date(options.timers.now());
    const { connectionId } = identity;
    this.listener = new ListenerConnection({
      connectionId,
      tenant: tenant.name,
      scheduler: context.scheduler,
      maxQueuedCommands: options.maxQueuedCommands,
      maxQueuedCommandBytes: options.maxQueuedCommandBytes,
      maxBufferedBytes: options.maxListenerBufferedBytes,
      logger: options.logger,
      timers: options.timers,
      onFrame: (frame, channel) => this.#handleListenerFrame(frame, channel),
      onCongestion: (congested) => this.#setCongested(congested),
      onReady: () => {
        this.#stopGraceTimer();
        options.logger.info("relay: listener ready", { connectionId, mode: this.listener.mode });
        emit("listener-ready", connectionId);
      },
      onDown: (code) => {
        options.logger.info("relay: listener disconnected", { connectionId, code });
        emit("listener-down", connectionId, code);
        if (!this.#removed) this.#startGraceTimer();
      },
    });
    this.#router = new ToolCallRouter({
      connectionId,
      tenant,
      options,
      sessions: () => this.#sessions.values(),
      answerListener: (frame) => this.listener.sendCommand(frame, { always: true }),
      onFailed: (requestId, reason) => emit("tool-call-failed", { connectionId, requestId, reason }),
    });
    this.#commands = new SdkCommands({
      connectionId,
      options,
      listener: this.listener,
      router: this.#router,
      requests: this.#requests,
      emit,
    });
    this.#startGraceTimer();
  }

  get isRemoved(): boolean {
    return this.#removed;
  }

  attachListener(socket: WebSocket, params: ListenerSocketParams): void {
    this.listener.attach(socket, params);
  }

  /**
   * Whether `principal` may attach a socket to the session `identity` names (or to a new one):
   * a session stays bound to the key that created it and to its runtime; a new session needs
   * room under the tenant's cap. `undefined` when it may.
   */
  checkSdk(principal: Principal, identity: string | undefined, binding: RuntimeBinding, channel: Channel): SdkAttachRefusal | undefined {
    const session = identity === undefined ? this.#anonymousPartner(principal, binding, channel) : this.#sessions.get(identity);
    if (session) {
      if (session.principal.keyId !== principal.keyId || mergeBinding(session.binding, binding) === undefined) {
        return { status: 403, kind: "session-bound-elsewhere", message: "this session is bound to another API key or another runtime" };
      }
      return undefined;
    }
    if (this.tenant.used("session") >= this.tenant.limit("session")) {
      return {
        status: 429,
        kind: "tenant-limit",
        message: `the tenant has ${this.tenant.limit("session")} SDK sessions (maxSessionsPerTenant)`,
      };
    }
    return undefined;
  }

  /**
   * Attaches an SDK status socket to the session named `identity` (created or resumed). Without
   * an identity the socket pairs with the oldest anonymous session of the same key still missing
   * this channel (opened within the last {@link ANONYMOUS_PAIRING_MS}); such sessions cannot be
   * resumed. Call {@link checkSdk} first; a socket that no longer passes it is closed (1013).
   */
  attachSdk(
    socket: WebSocket,
    channel: Channel,
    principal: Principal,
    identity: string | undefined,
    binding: RuntimeBinding,
  ): SdkSession | undefined {
    if (this.checkSdk(principal, identity, binding, channel)) {
      socket.close(1013, "Try again later");
      return undefined;
    }
    const { options, scheduler, emit } = this.#context;
    let session = identity === undefined ? this.#anonymousPartner(principal, binding, channel) : this.#sessions.get(identity);
    const wasBound = session?.runtimeKey !== undefined;
    if (session) session.binding = mergeBinding(session.binding, binding)!;
    else {
      if (!this.tenant.reserve("session")) {
        socket.close(1013, "Try again later");
        return undefined;
      }
      session = new SdkSession({
        identity: identity ?? `anonymous:${randomUUID()}`,
        principal,
        anonymous: identity === undefined,
        binding,
        maxUnackedBytes: options.maxUnackedBytes,
        timers: options.timers,
        logger: options.logger,
        onClosed: (closed) => this.#sessionClosed(closed),
      });
      this.#sessions.set(session.identity, session);
    }
    const attached = session;
    const queue = new InboundQueue({
      socket,
      scheduler,
      group: this.tenant.name,
      handle: (frame) => this.#commands.handle(attached, channel, socket, frame),
    });
    this.#sdkQueues.add(queue);
    if (this.listener.congested) queue.hold("congestion");
    socket.on("message", (data, isBinary) => {
      if (!isBinary) queue.push(data as Buffer);
    });
    socket.on("close", () => {
      this.#sdkQueues.delete(queue);
      attached.detach(channel, socket, options.sdkResumeWindowMs);
      emit("sdk-detached", { connectionId: this.identity.connectionId, sessionId: attached.id, channel });
    });
    socket.on("error", () => {
      // followed by close
    });
    const redelivered = attached.attach(channel, socket, queue);
    if (channel === "control") this.#router.resume(attached);
    if (!wasBound && attached.runtimeKey !== undefined) this.#router.sessionBound();
    emit("sdk-attached", { connectionId: this.identity.connectionId, sessionId: attached.id, channel, redelivered });
    return attached;
  }

  #anonymousPartner(principal: Principal, binding: RuntimeBinding, channel: Channel): SdkSession | undefined {
    const cutoff = this.#context.options.timers.now() - ANONYMOUS_PAIRING_MS;
    for (const session of this.#sessions.values()) {
      if (!session.anonymous || !session.attached || session.hasEverAttached(channel) || session.createdAt < cutoff) continue;
      if (session.principal.keyId === principal.keyId && mergeBinding(session.binding, binding) !== undefined) return session;
    }
    return undefined;
  }

  #sessionClosed(session: SdkSession): void {
    if (this.#sessions.get(session.identity) === session) this.#sessions.delete(session.identity);
    this.tenant.release("session");
    this.#requests.forgetSession(session);
    if (!this.#removed) this.#router.sessionGone(session);
    this.#context.options.logger.debug("relay: SDK session closed", { connectionId: this.identity.connectionId, session: session.id });
  }

  /** A frame from a current listener socket. */
  #handleListenerFrame(frame: RelayFrame, socketChannel: Channel | undefined): void {
    routeListenerFrame(
      {
        connectionId: this.identity.connectionId,
        options: this.#context.options,
        emit: this.#context.emit,
        router: this.#router,
        requests: this.#requests,
        commands: this.#commands,
        sessions: () => this.#sessions.values(),
      },
      frame,
      socketChannel,
    );
  }

  #setCongested(congested: boolean): void {
    for (const queue of this.#sdkQueues) {
      if (congested) queue.hold("congestion");
      else queue.release("congestion");
    }
  }

  #startGraceTimer(): void {
    this.#stopGraceTimer();
    const { timers, environmentGraceMs } = this.#context.options;
    this.#graceTimer = timers.setTimeout(() => this.#context.onExpired(this), environmentGraceMs);
    unrefTimer(this.#graceTimer);
  }

  #stopGraceTimer(): void {
    if (this.#graceTimer !== undefined) this.#context.options.timers.clearTimeout(this.#graceTimer);
    this.#graceTimer = undefined;
  }

  /** Closes every SDK socket of the environment with `code` (or cuts it without a close frame: `"terminate"`); returns how many. */
  dropSdkSockets(how: { code: number; reason: string } | "terminate"): number {
    let count = 0;
    for (const session of this.#sessions.values()) {
      for (const socket of session.sockets()) {
        if (how === "terminate") socket.terminate();
        else socket.close(how.code, how.reason);
        count++;
      }
    }
    return count;
  }

  /**
   * Ends the environment: listener sockets closed with `listenerCode` (if any are open), SDK
   * sockets with `sdkCode`, everything held is dropped. Idempotent.
   */
  remove(listenerCode: number, sdkCode: number, reason: string): void {
    if (this.#removed) return;
    this.#removed = true;
    this.#stopGraceTimer();
    this.#router.clear();
    this.#requests.clear();
    this.listener.close(listenerCode, reason);
    this.listener.discardQueue();
    for (const session of [...this.#sessions.values()]) session.close(sdkCode, reason);
    this.#sessions.clear();
  }

  /** Forgets calls the listener can no longer answer (a fresh registration means a fresh listener runtime). */
  forgetOutstandingCalls(): void {
    this.#router.clearCalls();
  }

  /** Periodic housekeeping. */
  sweep(): void {
    this.#router.sweep();
  }

  info(): RelayEnvironmentInfo {
    return {
      ...this.identity,
      tenant: this.tenant.name,
      registeredAt: this.registeredAt.toISOString(),
      connectedAt: this.listener.ready ? this.listener.connectedAt?.toISOString() : undefined,
      listenerConnected: this.listener.ready,
      listenerMode: this.listener.ready ? this.listener.mode : undefined,
      sdkSessions: this.#sessions.size,
      outstandingCalls: this.#router.pending(),
      queuedCommands: this.listener.queuedCommands,
      listenerCongested: this.listener.congested,
    };
  }
}
