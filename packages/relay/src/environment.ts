/**
 * One registered environment, owned by one tenant: the listener's connection, the SDK sessions
 * attached to it (sdk-session-table.ts), and the routing between them (docs/relay.md "Routing
 * rules"). Outstanding tool calls live here, so an answer reaches whatever listener socket the
 * environment has when it arrives.
 */
import type { WebSocket } from "ws";
import { unrefTimer, type TimerHandle } from "toolrelay/protocol";
import type { EnvironmentJournal } from "./environment-journal.js";
import type { FairScheduler } from "./fair-scheduler.js";
import { ListenerConnection, type ListenerSocketParams } from "./listener-connection.js";
import type { RelayEmit, RelayEnvironmentInfo } from "./relay-events.js";
import type { RelayFrame } from "./relay-frame.js";
import type { ResolvedRelayOptions } from "./relay-options.js";
import { routeListenerFrame } from "./listener-frames.js";
import type { Channel } from "./relay-routing.js";
import type { RuntimeBinding } from "./runtime-binding.js";
import { RecentAnswers } from "./recent-answers.js";
import { RequestOwners } from "./request-owners.js";
import { SdkCommands } from "./sdk-commands.js";
import type { SdkSession } from "./sdk-session.js";
import { SdkSessionTable } from "./sdk-session-table.js";
import type { Tenant } from "./tenant.js";
import { ToolCallRouter } from "./tool-call-router.js";
import { turnWrites } from "./turn-write-batch.js";

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
  /** Cluster mode: the environment's shared records and lease (docs/relay-cluster.md). */
  journal?: EnvironmentJournal | undefined;
  /** Cluster mode: this node may no longer act for the environment (its lease moved or ran out). */
  onFenced?: ((environment: Environment) => void) | undefined;
}

export class Environment {
  readonly identity: EnvironmentIdentity;
  readonly tenant: Tenant;
  readonly registeredAt: Date;
  readonly listener: ListenerConnection;
  /** The SDK sessions attached to the environment (or inside their resume window). */
  readonly sessions: SdkSessionTable;
  #context: EnvironmentContext;
  #router: ToolCallRouter;
  #requests = new RequestOwners();
  #answers: RecentAnswers;
  #commands: SdkCommands;
  #graceTimer: TimerHandle | undefined;
  #removed = false;
  /** Cluster mode: listener frames wait here, in order, while a tool call before them is written to the shared store. */
  #recording: Promise<void> | undefined;

  constructor(identity: EnvironmentIdentity, tenant: Tenant, context: EnvironmentContext) {
    this.identity = identity;
    this.tenant = tenant;
    this.#context = context;
    const { options, emit } = context;
    this.registeredAt = new Date(options.timers.now());
    const { connectionId } = identity;
    this.#answers = new RecentAnswers({
      timers: options.timers,
      onForgotten: context.journal ? (answer) => context.journal?.forgetCall(answer.requestId) : undefined,
    });
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
      onCongestion: (congested) => this.sessions.setCongested(congested),
      onReady: () => {
        this.#stopGraceTimer();
        context.journal?.listenerChanged(true, this.listener.connectedAt?.getTime());
        // Answers written lately may have gone into the socket that died: write them again (the listener ignores a repeat).
        for (const answer of this.#answers.connected()) this.listener.sendCommand(answer, { always: true });
        options.logger.info("relay: listener ready", { connectionId, mode: this.listener.mode });
        emit("listener-ready", connectionId);
      },
      onDown: (code) => {
        options.logger.info("relay: listener disconnected", { connectionId, code });
        emit("listener-down", connectionId, code);
        context.journal?.listenerChanged(false, undefined);
        if (!this.#removed) this.#startGraceTimer();
      },
    });
    this.sessions = new SdkSessionTable({
      connectionId,
      tenant,
      options,
      scheduler: context.scheduler,
      emit,
      congested: () => this.listener.congested,
      handle: (session, channel, socket, frame) => {
        if (this.#fencedOut()) return;
        this.#commands.handle(session, channel, socket, frame);
      },
      onAttached: (session, channel, newlyBound) => {
        if (channel === "control") this.#router.resume(session);
        if (newlyBound) this.#router.sessionBound();
      },
      onClosed: (session) => this.#sessionClosed(session),
      onCreated: context.journal
        ? (session) => context.journal?.sessionCreated(session.identity, session.principal.keyId, session.binding)
        : undefined,
    });
    this.#router = new ToolCallRouter({
      connectionId,
      tenant,
      options,
      sessions: () => this.sessions.values(),
      answerListener: (frame) => this.listener.sendCommand(frame, { always: true }),
      onFailed: (requestId, reason) => {
        context.journal?.forgetCall(requestId);
        emit("tool-call-failed", { connectionId, requestId, reason });
      },
      onRegistrant: context.journal ? (runtimeKey, identity) => context.journal?.setRegistrant(runtimeKey, identity) : undefined,
    });
    this.#commands = new SdkCommands({
      connectionId,
      options,
      listener: this.listener,
      router: this.#router,
      requests: this.#requests,
      emit,
      answered: (requestId, runtimeKey, answer, delivery) => {
        this.#answers.add({ requestId, runtimeKey, frame: answer, delivery });
        context.journal?.answerCall(requestId, runtimeKey, answer);
      },
    });
    this.#startGraceTimer();
  }

  get isRemoved(): boolean {
    return this.#removed;
  }

  attachListener(socket: WebSocket, params: ListenerSocketParams): void {
    this.listener.attach(socket, params);
  }

  /** A session closed for good: its requests are forgotten, its calls go to another session. */
  #sessionClosed(session: SdkSession): void {
    this.#requests.forgetSession(session);
    if (!this.#removed && !session.anonymous) this.#context.journal?.sessionClosed(session.identity);
    if (!this.#removed) this.#router.sessionGone(session);
    this.#context.options.logger.debug("relay: SDK session closed", { connectionId: this.identity.connectionId, session: session.id });
  }

  /**
   * Cluster mode: whether this node lost the right to act for the environment; if so, it lets
   * the environment go (its sockets are closed with 1012, so clients reconnect to the holder).
   */
  #fencedOut(): boolean {
    const { journal, onFenced } = this.#context;
    if (!journal || this.#removed || journal.mayAct()) return this.#removed;
    onFenced?.(this);
    return true;
  }

  /**
   * A frame from a current listener socket. In cluster mode a tool call is written to the shared
   * store before it goes to a session, and the frames after it wait for that, in order (the
   * writes of several calls run side by side).
   */
  #handleListenerFrame(frame: RelayFrame, socketChannel: Channel | undefined): void {
    const journal = this.#context.journal;
    if (!journal) {
      this.#routeListenerFrame(frame, socketChannel);
      return;
    }
    if (this.#fencedOut()) return;
    const requestId = frame.requestId;
    const runtimeKey = frame.runtimeKey;
    const isCall = frame.type === "external_tool_call_request" && requestId !== undefined && runtimeKey !== undefined;
    if (!isCall && this.#recording === undefined) {
      this.#routeListenerFrame(frame, socketChannel);
      return;
    }
    const kept = frame.retain();
    // The write starts now (calls are written side by side); the frames go on in arrival order.
    const written = isCall
      ? journal.recordCall(requestId, runtimeKey, kept).catch((error: unknown) => {
          this.#context.options.logger.warn("relay: a tool call could not be written to the cluster store; delivered anyway", {
            connectionId: this.identity.connectionId,
            error: String(error),
          });
        })
      : undefined;
    const step = (this.#recording ?? Promise.resolve()).then(async () => {
      await written;
      if (this.#fencedOut()) return;
      turnWrites.holdUntilImmediate();
      try {
        this.#routeListenerFrame(kept, socketChannel);
      } catch (error) {
        this.#context.options.logger.warn("relay: a listener frame handler threw", { error: String(error) });
      }
    });
    this.#recording = step;
    const settle = () => {
      if (this.#recording === step) this.#recording = undefined;
    };
    step.then(settle, settle);
  }

  /**
   * Cluster mode, a node taking the environment over: what the shared store holds for it — the
   * previous holder's named sessions (bound to their keys for the resume window), the tool
   * registrants, and the outstanding calls.
   */
  restore(
    sessions: ReadonlyMap<string, { keyId: string; binding: RuntimeBinding }>,
    registrants: ReadonlyMap<string, string>,
    calls: Iterable<{ requestId: string; runtimeKey: string; frame: RelayFrame }>,
    answers: Iterable<{ requestId: string; runtimeKey: string; frame: RelayFrame; answeredAt: number }>,
  ): void {
    const until = this.#context.options.timers.now() + this.#context.options.sdkResumeWindowMs;
    this.sessions.reserve(new Map([...sessions].map(([identity, bound]) => [identity, { ...bound, until }])));
    this.#router.restore(registrants, calls);
    // Answered on the previous holder: written again to the listener when it connects here (it may never have got them).
    for (const answer of answers) this.#answers.add({ ...answer, delivery: "elsewhere" });
  }

  #routeListenerFrame(frame: RelayFrame, socketChannel: Channel | undefined): void {
    routeListenerFrame(
      {
        connectionId: this.identity.connectionId,
        options: this.#context.options,
        emit: this.#context.emit,
        router: this.#router,
        requests: this.#requests,
        commands: this.#commands,
        sessions: () => this.sessions.values(),
      },
      frame,
      socketChannel,
    );
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
    this.#answers.clear();
    this.listener.close(listenerCode, reason);
    this.listener.discardQueue();
    this.sessions.closeAll(sdkCode, reason);
  }

  /** Forgets calls the listener can no longer answer (a fresh registration means a fresh listener runtime). */
  forgetOutstandingCalls(): void {
    this.#router.clearCalls();
    this.#answers.clear();
    this.#context.journal?.forgetAllCalls();
  }

  /** Periodic housekeeping. */
  sweep(): void {
    this.#router.sweep();
    this.#answers.prune();
  }

  info(): RelayEnvironmentInfo {
    return {
      ...this.identity,
      tenant: this.tenant.name,
      registeredAt: this.registeredAt.toISOString(),
      connectedAt: this.listener.ready ? this.listener.connectedAt?.toISOString() : undefined,
      listenerConnected: this.listener.ready,
      listenerMode: this.listener.ready ? this.listener.mode : undefined,
      sdkSessions: this.sessions.size,
      outstandingCalls: this.#router.pending(),
      queuedCommands: this.listener.queuedCommands,
      listenerCongested: this.listener.congested,
    };
  }
}
