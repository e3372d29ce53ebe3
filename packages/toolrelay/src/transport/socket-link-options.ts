/**
 * What makes one kind of link out of the shared link base (socket-link.ts): the local link and the
 * cloud link are each one of these (docs/protocol.md#how-the-links-are-built).
 */
import type { ToolrelayError, ToolrelayErrorCode } from "../errors.js";
import type { Timers } from "../internal/timers.js";
import type { DecodedFrame, OutboundFrame } from "../wire/index.js";
import type { BackoffOptions } from "./backoff.js";
import type { LinkAddress, LinkSockets } from "./link-sockets.js";
import type { WebSocketConstructor } from "./open-web-socket.js";

/**
 * What a link adds to every connection when its peer wraps frames in a delivery envelope (the
 * cloud relay: acks, duplicates, lost events). A link without one hands every frame on as decoded.
 */
export interface DeliveryRules<Channel extends string> {
  /** A connection's sockets are open; the frames that came early are read right after this. */
  connected(sockets: LinkSockets<Channel>): void;
  /** One inbound text frame, in arrival order: the frame to hand on, or `undefined` when a rule drops it. */
  accept(channel: Channel, text: string): DecodedFrame | undefined;
  /** A frame is about to be written. */
  sending(frame: OutboundFrame): void;
  /** The connection dropped (a reconnect follows, or the link closes). */
  dropped(): void;
  /** The link closed for good. */
  closed(): void;
}

/** What makes one kind of link out of the base: its sockets, where they go, its heartbeat, its rules. */
export interface SocketLinkOptions<Channel extends string> {
  /** Names the link in its error texts (`local`, `cloud`). */
  name: string;
  connectionId: string;
  keepsPendingCallsAcrossReconnect: boolean;
  /** The sockets of one connection; frames are written on the first. */
  channels: readonly [Channel, ...Channel[]];
  /** Where the next connection's sockets go, asked at every connect and reconnect. */
  address(): LinkAddress<Channel>;
  /** The forms of the credentials: never in an error text. */
  secrets: readonly string[];
  WebSocket?: WebSocketConstructor | undefined;
  maxPayload?: number | undefined;
  connectTimeoutMs?: number | undefined;
  timers: Timers;
  /** Reconnect after a drop (else close). */
  reconnect: boolean;
  backoff?: BackoffOptions | undefined;
  /** A failed attempt with one of these codes ends the retries, and the link closes. */
  fatal: readonly ToolrelayErrorCode[];
  /**
   * Ping every `pingIntervalMs` (`0`: no heartbeat), a JSON `ping` too when `jsonPing`; a socket
   * without proof of life `pongTimeoutMs` after a ping is dead. The proof is any traffic, or only
   * an answer to a ping (`proof: "answers"`). Held to the deadline from the first byte: every
   * WebSocket peer answers a protocol ping (RFC 6455, 5.5.2).
   */
  heartbeat: { pingIntervalMs: number; pongTimeoutMs: number; proof: "traffic" | "answers"; jsonPing: boolean };
  rules?: DeliveryRules<Channel> | undefined;
  /** A close code after which reconnecting cannot work: the error it means (the link then closes), or `undefined`. */
  finalClose?(code: number, detail: string): ToolrelayError | undefined;
}
