/**
 * One SDK client attached to an environment: its control and stream sockets, a delivery `seq`
 * per channel, and the frames it has not acknowledged yet. The session outlives its sockets for
 * the resume window, so a reconnecting client gets the unacknowledged frames again (with their
 * original `seq`) and the numbering simply continues.
 */
import { randomUUID } from "node:crypto";
import { WebSocket } from "ws";
import type { RelayLogger } from "./relay-options.js";
import { withSeq, type Channel } from "./relay-routing.js";

interface PendingFrame {
  seq: number;
  /** The frame as sent, `seq` included. */
  text: string;
}

class ChannelState {
  socket: WebSocket | undefined;
  nextSeq = 1;
  lastAckedSeq = 0;
  readonly unacked: PendingFrame[] = [];
}

export interface SdkSessionOptions {
  /** Identity key (see docs/relay.md "SDK status sockets and sessions"). */
  identity: string;
  /** Made of sockets that named no identity: paired by arrival, never resumed. Default false. */
  anonymous?: boolean;
  maxUnackedFrames: number;
  logger: RelayLogger;
  /** Called when the last socket of the session went away. */
  onDetached(session: SdkSession): void;
}

export class SdkSession {
  /** Internal id for logs (never a credential, never the identity, which may name an agent). */
  readonly id = `sdk-${randomUUID().slice(0, 8)}`;
  readonly identity: string;
  readonly anonymous: boolean;
  readonly createdAt = Date.now();
  /** Runtime keys whose frames this session receives. */
  readonly subscriptions = new Set<string>();
  /** Updated whenever a socket attaches; used to prefer the most recent session. */
  lastAttachedAt = 0;
  private readonly channels: Record<Channel, ChannelState> = { control: new ChannelState(), stream: new ChannelState() };
  private readonly options: SdkSessionOptions;
  private readonly everAttached = new Set<Channel>();
  private closed = false;

  constructor(options: SdkSessionOptions) {
    this.options = options;
    this.identity = options.identity;
    this.anonymous = options.anonymous ?? false;
  }

  /** Whether any socket of the session is open (or opening). */
  get attached(): boolean {
    return !this.closed && (isLive(this.channels.control.socket) || isLive(this.channels.stream.socket));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Makes `socket` the session's socket for `channel` (closing an older one still open) and
   * sends it every unacknowledged frame of that channel. Returns how many were redelivered.
   */
  attach(channel: Channel, socket: WebSocket): number {
    const state = this.channels[channel];
    const previous = state.socket;
    state.socket = socket;
    this.everAttached.add(channel);
    this.lastAttachedAt = Date.now();
    if (previous && previous !== socket && isLive(previous)) {
      previous.close(1001, "Replaced by a newer status socket");
    }
    for (const frame of state.unacked) socket.send(frame.text);
    return state.unacked.length;
  }

  /** Whether a socket was ever attached for `channel`. */
  hasEverAttached(channel: Channel): boolean {
    return this.everAttached.has(channel);
  }

  /** Forgets `socket` if it is still the channel's socket; reports when the session has none left. */
  detach(channel: Channel, socket: WebSocket): void {
    const state = this.channels[channel];
    if (state.socket !== socket) return;
    state.socket = undefined;
    if (!this.closed && !this.attached) this.options.onDetached(this);
  }

  /** Stamps the next `seq` of `channel` on `text`, keeps it until acknowledged, and sends it if a socket is open. */
  deliver(channel: Channel, text: string): number {
    const state = this.channels[channel];
    const seq = state.nextSeq++;
    const stamped = withSeq(text, seq);
    state.unacked.push({ seq, text: stamped });
    if (state.unacked.length > this.options.maxUnackedFrames) {
      const dropped = state.unacked.shift();
      this.options.logger.warn("relay: unacknowledged frame buffer full; oldest frame dropped", {
        session: this.id,
        channel,
        seq: dropped?.seq,
      });
    }
    const socket = state.socket;
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(stamped);
    return seq;
  }

  /** Cumulative acknowledgement: every frame of `channel` up to `seq` is done. */
  acknowledge(channel: Channel, seq: number): void {
    const state = this.channels[channel];
    if (!Number.isSafeInteger(seq)) return;
    const upTo = Math.min(seq, state.nextSeq - 1);
    if (upTo <= state.lastAckedSeq) return;
    state.lastAckedSeq = upTo;
    let remove = 0;
    while (remove < state.unacked.length && (state.unacked[remove]?.seq ?? Infinity) <= upTo) remove++;
    state.unacked.splice(0, remove);
  }

  /** Whether the frame sent with `seq` on `channel` was acknowledged. */
  isAcknowledged(channel: Channel, seq: number): boolean {
    return seq <= this.channels[channel].lastAckedSeq;
  }

  /** Whether the frame sent with `seq` is still held for redelivery. */
  isHeld(channel: Channel, seq: number): boolean {
    return this.channels[channel].unacked.some((frame) => frame.seq === seq);
  }

  /** Frames waiting for an acknowledgement on `channel`. */
  unackedCount(channel: Channel): number {
    return this.channels[channel].unacked.length;
  }

  /** The open sockets of the session. */
  sockets(): WebSocket[] {
    return [this.channels.control.socket, this.channels.stream.socket].filter((socket): socket is WebSocket => isLive(socket));
  }

  /** Closes both sockets with `code` and drops everything held. Idempotent. */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const channel of ["control", "stream"] as const) {
      const state = this.channels[channel];
      const socket = state.socket;
      state.socket = undefined;
      state.unacked.length = 0;
      if (socket && isLive(socket)) socket.close(code, reason);
    }
  }
}

function isLive(socket: WebSocket | undefined): socket is WebSocket {
  return socket !== undefined && (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING);
}
