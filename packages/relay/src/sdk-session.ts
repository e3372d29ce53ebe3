/**
 * One SDK client attached to an environment: its control and stream sockets, a delivery `seq`
 * per channel, the frames it has not acknowledged yet (bounded in bytes), the key and runtime it
 * is bound to, and the requests it is waiting on. The session outlives its sockets for the
 * resume window, so a reconnecting client gets the unacknowledged frames again (with their
 * original `seq`) and the numbering simply continues.
 */
import { randomUUID } from "node:crypto";
import { WebSocket } from "ws";
import { unrefTimer, type TimerHandle, type Timers } from "toolrelay/protocol";
import type { InboundQueue } from "./inbound-queue.js";
import { turnWrites } from "./turn-write-batch.js";
import { RELAY_CLOSE } from "./relay-close-codes.js";
import { stampSeq, type RelayFrame, type StampedFrame } from "./relay-frame.js";
import type { RelayLogger } from "./relay-options.js";
import type { Channel } from "./relay-routing.js";
import type { RuntimeBinding } from "./runtime-binding.js";
import type { Principal } from "./tenant-directory.js";
import type { UnackedHolder } from "./tenant.js";

class ChannelState {
  socket: WebSocket | undefined;
  queue: InboundQueue | undefined;
  nextSeq = 1;
  lastAckedSeq = 0;
  readonly unacked: StampedFrame[] = [];
}

export interface SdkSessionOptions {
  /** Identity key (see docs/relay.md "SDK status sockets and sessions"). */
  identity: string;
  principal: Principal;
  /** Made of sockets that named no identity: paired by arrival, never resumed. Default false. */
  anonymous?: boolean | undefined;
  binding: RuntimeBinding;
  maxUnackedBytes: number;
  timers: Timers;
  logger: RelayLogger;
  /** The session closed for good (expired, cut, or its environment went away). */
  onClosed(session: SdkSession, code: number): void;
}

/** Bytes a held frame costs besides its own (the record keeping it). */
const FRAME_OVERHEAD_BYTES = 64;

/** Sends a stamped frame as one message (two fragments when it is large, to avoid a copy). */
export function sendStamped(socket: WebSocket, frame: StampedFrame): void {
  turnWrites.beforeWrite(socket);
  if (frame.tail.length === 0) {
    socket.send(frame.head, { binary: false });
    return;
  }
  socket.send(frame.head, { binary: false, fin: false });
  socket.send(frame.tail, { binary: false, fin: true });
}

export class SdkSession implements UnackedHolder {
  /** Internal id for logs and events (never a credential, never the identity, which may name an agent). */
  readonly id = `sdk-${randomUUID().slice(0, 8)}`;
  readonly identity: string;
  readonly principal: Principal;
  readonly anonymous: boolean;
  readonly createdAt: number;
  /** Updated whenever a socket attaches; used to prefer the most recent session. */
  lastAttachedAt = 0;
  #binding: RuntimeBinding;
  #channels: Record<Channel, ChannelState> = { control: new ChannelState(), stream: new ChannelState() };
  #options: SdkSessionOptions;
  #everAttached = new Set<Channel>();
  #unackedBytes = 0;
  #resumeTimer: TimerHandle | undefined;
  #closed = false;

  constructor(options: SdkSessionOptions) {
    this.#options = options;
    this.identity = options.identity;
    this.principal = options.principal;
    this.anonymous = options.anonymous ?? false;
    this.#binding = options.binding;
    this.createdAt = options.timers.now();
  }

  get binding(): RuntimeBinding {
    return this.#binding;
  }

  set binding(binding: RuntimeBinding) {
    this.#binding = binding;
  }

  /** The bound runtime's key, once bound. */
  get runtimeKey(): string | undefined {
    return this.#binding.state === "bound" ? this.#binding.runtimeKey : undefined;
  }

  /** Whether any socket of the session is open (or opening). */
  get attached(): boolean {
    return !this.#closed && (isLive(this.#channels.control.socket) || isLive(this.#channels.stream.socket));
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  get unackedBytes(): number {
    return this.#unackedBytes;
  }

  /**
   * Makes `socket` the session's socket for `channel` (closing an older one still open) and
   * sends it every unacknowledged frame of that channel. Returns how many were redelivered.
   */
  attach(channel: Channel, socket: WebSocket, queue: InboundQueue): number {
    const state = this.#channels[channel];
    const previous = state.socket;
    state.socket = socket;
    state.queue = queue;
    this.#everAttached.add(channel);
    this.lastAttachedAt = this.#options.timers.now();
    this.#stopResumeTimer();
    if (previous && previous !== socket && isLive(previous)) previous.close(1001, "Replaced by a newer status socket");
    for (const frame of state.unacked) sendStamped(socket, frame);
    return state.unacked.length;
  }

  /** Whether a socket was ever attached for `channel`. */
  hasEverAttached(channel: Channel): boolean {
    return this.#everAttached.has(channel);
  }

  /** Forgets `socket` if it is still the channel's socket; with no socket left, the resume window starts. */
  detach(channel: Channel, socket: WebSocket, resumeWindowMs: number): void {
    const state = this.#channels[channel];
    if (state.socket !== socket) return;
    state.socket = undefined;
    if (this.#closed || this.attached) return;
    this.#stopResumeTimer();
    this.#resumeTimer = this.#options.timers.setTimeout(
      () => {
        this.#resumeTimer = undefined;
        if (!this.attached) this.close(RELAY_CLOSE.sessionExpired.code, RELAY_CLOSE.sessionExpired.reason);
      },
      this.anonymous ? 0 : resumeWindowMs,
    );
    unrefTimer(this.#resumeTimer);
  }

  /**
   * Stamps the next `seq` of `channel` on `frame`, keeps it until acknowledged, and sends it if a
   * socket is open. Past the session's byte bound the session is closed (4008) instead; then
   * `undefined` is returned.
   */
  deliver(channel: Channel, frame: RelayFrame): number | undefined {
    if (this.#closed) return undefined;
    const state = this.#channels[channel];
    const stamped = stampSeq(frame, state.nextSeq);
    const cost = stamped.bytes + FRAME_OVERHEAD_BYTES;
    if (this.#unackedBytes > 0 && this.#unackedBytes + cost > this.#options.maxUnackedBytes) {
      this.#cut("session bound");
      return undefined;
    }
    state.nextSeq++;
    state.unacked.push(stamped);
    this.#setUnacked(this.#unackedBytes + cost);
    if (this.#closed) return undefined; // the tenant's budget cut this session
    const socket = state.socket;
    if (socket && socket.readyState === WebSocket.OPEN) {
      sendStamped(socket, stamped);
      this.#checkBuffered(socket);
    }
    return stamped.seq;
  }

  /** Sends a frame that takes no `seq` and is not kept (a pong). */
  sendUnsequenced(socket: WebSocket, data: Buffer): void {
    if (socket.readyState !== WebSocket.OPEN) return;
    turnWrites.beforeWrite(socket);
    socket.send(data, { binary: false });
    this.#checkBuffered(socket);
  }

  /** Cumulative acknowledgement: every frame of `channel` up to `seq` is done. */
  acknowledge(channel: Channel, seq: number): void {
    const state = this.#channels[channel];
    if (!Number.isSafeInteger(seq)) return;
    const upTo = Math.min(seq, state.nextSeq - 1);
    if (upTo <= state.lastAckedSeq) return;
    state.lastAckedSeq = upTo;
    let remove = 0;
    let freed = 0;
    while (remove < state.unacked.length && state.unacked[remove]!.seq <= upTo)
      freed += state.unacked[remove++]!.bytes + FRAME_OVERHEAD_BYTES;
    state.unacked.splice(0, remove);
    this.#setUnacked(this.#unackedBytes - freed);
  }

  /** Whether the frame sent with `seq` is still held for redelivery. */
  isHeld(channel: Channel, seq: number): boolean {
    return this.#channels[channel].unacked.some((frame) => frame.seq === seq);
  }

  /** Frames waiting for an acknowledgement on `channel`. */
  unackedCount(channel: Channel): number {
    return this.#channels[channel].unacked.length;
  }

  /** The open sockets of the session. */
  sockets(): WebSocket[] {
    return [this.#channels.control.socket, this.#channels.stream.socket].filter((socket): socket is WebSocket => isLive(socket));
  }

  overTenantBudget(): void {
    this.#cut("tenant budget");
  }

  /** Closes both sockets with `code`, drops everything held and queued. Idempotent. */
  close(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopResumeTimer();
    for (const channel of ["control", "stream"] as const) {
      const state = this.#channels[channel];
      const socket = state.socket;
      state.socket = undefined;
      state.unacked.length = 0;
      state.queue?.discard();
      if (socket && isLive(socket)) socket.close(code, reason);
    }
    this.#setUnacked(0);
    this.#options.onClosed(this, code);
  }

  #cut(why: string): void {
    this.#options.logger.warn("relay: SDK session over its unacknowledged-bytes bound; closing it", {
      session: this.id,
      tenant: this.principal.tenant.name,
      bound: why,
      unackedBytes: this.#unackedBytes,
    });
    this.close(RELAY_CLOSE.unackedLimit.code, RELAY_CLOSE.unackedLimit.reason);
  }

  /** A socket that does not read piles up frames in the relay's write buffer: that counts against the same bound. */
  #checkBuffered(socket: WebSocket): void {
    if (socket.bufferedAmount > this.#options.maxUnackedBytes * 2) this.#cut("write buffer");
  }

  #setUnacked(bytes: number): void {
    this.#unackedBytes = Math.max(0, bytes);
    this.principal.tenant.setUnacked(this, this.#unackedBytes);
  }

  #stopResumeTimer(): void {
    if (this.#resumeTimer !== undefined) this.#options.timers.clearTimeout(this.#resumeTimer);
    this.#resumeTimer = undefined;
  }
}

function isLive(socket: WebSocket | undefined): socket is WebSocket {
  return socket !== undefined && (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING);
}
