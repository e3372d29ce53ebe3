/**
 * The SDK sessions of one environment: who may attach a status socket to which session
 * (docs/relay.md "SDK status sockets and sessions"), the session each socket joins (named,
 * resumed, or paired by arrival when anonymous), the tenant's session count, and the inbound
 * queue of every SDK socket — held while the environment's listener is congested.
 */
import { randomUUID } from "node:crypto";
import type { WebSocket } from "ws";
import type { FairScheduler } from "./fair-scheduler.js";
import { InboundQueue } from "./inbound-queue.js";
import type { RelayEmit } from "./relay-events.js";
import type { RelayFrame } from "./relay-frame.js";
import type { ResolvedRelayOptions } from "./relay-options.js";
import type { Channel } from "./relay-routing.js";
import { mergeBinding, type RuntimeBinding } from "./runtime-binding.js";
import { SdkSession } from "./sdk-session.js";
import type { Principal } from "./tenant-directory.js";
import type { Tenant } from "./tenant.js";

/** Why an SDK socket may not attach (answered to the upgrade with `status`). */
export interface SdkAttachRefusal {
  status: number;
  message: string;
  kind: "session-bound-elsewhere" | "tenant-limit";
}

export interface SdkSessionTableOptions {
  connectionId: string;
  /** The environment's tenant: every session counts against its `session` cap. */
  tenant: Tenant;
  options: ResolvedRelayOptions;
  scheduler: FairScheduler;
  emit: RelayEmit;
  /** Whether the environment's listener is congested now (a new socket's queue starts held). */
  congested(): boolean;
  /** A frame from an SDK socket of `session`. */
  handle(session: SdkSession, channel: Channel, socket: WebSocket, frame: RelayFrame | undefined): void;
  /** A socket attached to `session` (`newlyBound`: the session is bound to a runtime since this socket). */
  onAttached(session: SdkSession, channel: Channel, newlyBound: boolean): void;
  /** A named (resumable) session was created (cluster mode records its key and binding). */
  onCreated?: ((session: SdkSession) => void) | undefined;
  /** `session` closed for good (already forgotten here, its tenant slot released). */
  onClosed(session: SdkSession): void;
}

/** How long an anonymous SDK socket waits for its partner channel. */
const ANONYMOUS_PAIRING_MS = 10_000;

/**
 * Cluster mode: a session of the environment's previous holder, known by its identity only until
 * it reconnects here — still bound to its key and runtime for the resume window.
 */
export interface ReservedSession {
  keyId: string;
  binding: RuntimeBinding;
  until: number;
}

export class SdkSessionTable {
  #options: SdkSessionTableOptions;
  #sessions = new Map<string, SdkSession>();
  #reserved = new Map<string, ReservedSession>();
  #queues = new Set<InboundQueue>();

  constructor(options: SdkSessionTableOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** The current sessions (attached or inside their resume window). */
  values(): IterableIterator<SdkSession> {
    return this.#sessions.values();
  }

  /**
   * Whether `principal` may attach a socket to the session `identity` names (or to a new one):
   * a session stays bound to the key that created it and to its runtime; a new session needs
   * room under the tenant's cap. `undefined` when it may.
   */
  check(principal: Principal, identity: string | undefined, binding: RuntimeBinding, channel: Channel): SdkAttachRefusal | undefined {
    const { tenant } = this.#options;
    const session = identity === undefined ? this.#anonymousPartner(principal, binding, channel) : this.#sessions.get(identity);
    const bound = session ?? this.#reservation(identity);
    if (bound) {
      const keyId = session ? session.principal.keyId : (bound as ReservedSession).keyId;
      if (keyId !== principal.keyId || mergeBinding(bound.binding, binding) === undefined) {
        return { status: 403, kind: "session-bound-elsewhere", message: "this session is bound to another API key or another runtime" };
      }
      if (session) return undefined;
    }
    if (tenant.used("session") >= tenant.limit("session")) {
      return {
        status: 429,
        kind: "tenant-limit",
        message: `the tenant has ${tenant.limit("session")} SDK sessions (maxSessionsPerTenant)`,
      };
    }
    return undefined;
  }

  /**
   * Attaches an SDK status socket to the session named `identity` (created or resumed). Without
   * an identity the socket pairs with the oldest anonymous session of the same key still missing
   * this channel (opened within the last {@link ANONYMOUS_PAIRING_MS}); such sessions cannot be
   * resumed. Call {@link check} first; a socket that no longer passes it is closed (1013).
   */
  attach(
    socket: WebSocket,
    channel: Channel,
    principal: Principal,
    identity: string | undefined,
    binding: RuntimeBinding,
  ): SdkSession | undefined {
    if (this.check(principal, identity, binding, channel)) {
      socket.close(1013, "Try again later");
      return undefined;
    }
    const { connectionId, tenant, options, scheduler, emit } = this.#options;
    let session = identity === undefined ? this.#anonymousPartner(principal, binding, channel) : this.#sessions.get(identity);
    const wasBound = session?.runtimeKey !== undefined;
    if (session) session.binding = mergeBinding(session.binding, binding)!;
    else {
      const reserved = this.#reservation(identity);
      if (reserved) {
        binding = mergeBinding(reserved.binding, binding) ?? binding;
        this.#reserved.delete(identity!);
      }
      if (!tenant.reserve("session")) {
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
        onClosed: (closed) => this.#closed(closed),
      });
      this.#sessions.set(session.identity, session);
      if (!session.anonymous) this.#options.onCreated?.(session);
    }
    const attached = session;
    const queue = new InboundQueue({
      socket,
      scheduler,
      group: tenant.name,
      handle: (frame) => this.#options.handle(attached, channel, socket, frame),
    });
    this.#queues.add(queue);
    if (this.#options.congested()) queue.hold("congestion");
    socket.on("message", (data, isBinary) => {
      if (!isBinary) queue.push(data as Buffer);
    });
    socket.on("close", () => {
      this.#queues.delete(queue);
      attached.detach(channel, socket, options.sdkResumeWindowMs);
      emit("sdk-detached", { connectionId, sessionId: attached.id, channel });
    });
    socket.on("error", () => {
      // followed by close
    });
    const redelivered = attached.attach(channel, socket, queue);
    this.#options.onAttached(attached, channel, !wasBound && attached.runtimeKey !== undefined);
    emit("sdk-attached", { connectionId, sessionId: attached.id, channel, redelivered });
    return attached;
  }

  /**
   * Cluster mode, a node taking the environment over: the previous holder's named sessions, each
   * still bound to its key and runtime until `until` (the resume window) — only its key may take
   * its identity up again.
   */
  reserve(reservations: ReadonlyMap<string, ReservedSession>): void {
    for (const [identity, reservation] of reservations) if (!this.#sessions.has(identity)) this.#reserved.set(identity, reservation);
  }

  #reservation(identity: string | undefined): ReservedSession | undefined {
    if (identity === undefined) return undefined;
    const reserved = this.#reserved.get(identity);
    if (reserved && reserved.until <= this.#options.options.timers.now()) {
      this.#reserved.delete(identity);
      return undefined;
    }
    return reserved;
  }

  /** Holds (or releases) the inbound queue of every SDK socket while the listener is congested. */
  setCongested(congested: boolean): void {
    for (const queue of this.#queues) {
      if (congested) queue.hold("congestion");
      else queue.release("congestion");
    }
  }

  /** Closes every SDK socket with `code` (or cuts it without a close frame: `"terminate"`); returns how many. */
  dropSockets(how: { code: number; reason: string } | "terminate"): number {
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

  /** Closes every session for good with `code`. */
  closeAll(code: number, reason: string): void {
    for (const session of [...this.#sessions.values()]) session.close(code, reason);
    this.#sessions.clear();
  }

  #anonymousPartner(principal: Principal, binding: RuntimeBinding, channel: Channel): SdkSession | undefined {
    const cutoff = this.#options.options.timers.now() - ANONYMOUS_PAIRING_MS;
    for (const session of this.#sessions.values()) {
      if (!session.anonymous || !session.attached || session.hasEverAttached(channel) || session.createdAt < cutoff) continue;
      if (session.principal.keyId === principal.keyId && mergeBinding(session.binding, binding) !== undefined) return session;
    }
    return undefined;
  }

  #closed(session: SdkSession): void {
    if (this.#sessions.get(session.identity) === session) this.#sessions.delete(session.identity);
    this.#options.tenant.release("session");
    this.#options.onClosed(session);
  }
}
