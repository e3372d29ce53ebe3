import type { EventEmitter } from "eventemitter3";
import type { ToolrelayError } from "../errors.js";
import type { FrameEnvelope, InboundFrame, OutboundFrame } from "../wire/index.js";

/**
 * The state of a link to a runtime.
 * - `idle`: created, `connect()` not called yet.
 * - `connecting`: first connection attempt in progress.
 * - `open`: frames can be sent.
 * - `reconnecting`: the link dropped and is being re-established.
 * - `closed`: closed for good (by `close()` or after giving up).
 */
export type LinkState = "idle" | "connecting" | "open" | "reconnecting" | "closed";

export interface RuntimeLinkEvents {
  /** A known, schema-valid frame, in arrival order. */
  frame: [frame: InboundFrame, envelope: FrameEnvelope];
  /** A frame whose `type` is not modelled. Ignored by the session (runtimes add frame types). */
  "unknown-frame": [type: string];
  /** A frame that could not be decoded (bad JSON, or a known type failing its schema). */
  /** `frame`: the invalid frame's `type` and `request_id`, when it had them (a refused request can be answered). */
  "invalid-frame": [error: string, frame?: { type?: string | undefined; requestId?: string | undefined }];
  /** Emitted after the state changed. */
  state: [state: LinkState, previous: LinkState];
  /** The link is open again after a drop (not emitted for the first open). */
  reconnected: [];
  /** A transport problem worth reporting (the link handles it itself). */
  error: [error: ToolrelayError];
}

/**
 * One logical connection to a Letta Code runtime: the local app-server socket,
 * or the cloud relay's control + stream socket pair. Reconnects are handled
 * inside the link; the `connectionId` survives them.
 */
export interface RuntimeLink extends EventEmitter<RuntimeLinkEvents> {
  /** Logical connection id: stable across socket reconnects; part of every CallKey. */
  readonly connectionId: string;
  readonly state: LinkState;
  /**
   * `true` when the runtime keeps its pending tool calls across a reconnect of
   * this link (cloud relay), so responses held during the drop are re-sent for
   * their original request ids. `false` for the local app-server, which drops
   * a connection's pending calls when its socket closes.
   */
  readonly keepsPendingCallsAcrossReconnect: boolean;
  /** Open the link. Resolves when open; rejects with CONNECT_FAILED or UNAUTHORIZED. */
  connect(): Promise<void>;
  /**
   * The connection epoch: 1 for the first socket (pair), one more after every reconnect. A tool
   * call request arrives on the epoch current when it is emitted; see docs/settlement.md.
   */
  readonly epoch: number;
  /**
   * Write one frame. Returns `false` (and writes nothing) when the link is not open. The frame is
   * checked against the outbound schemas first (`INVALID_FRAME`), unless `trusted` (frames the SDK
   * built itself from checked parts, such as tool call responses).
   */
  send(frame: OutboundFrame, trusted?: boolean): boolean;
  /** Close for good. Idempotent; no reconnect after it. */
  close(): Promise<void>;
  /**
   * Whether a turn is running (the session calls it when a turn begins and ends). Optional: a
   * link that syncs on lost events (cloud) does so only during turns.
   */
  setTurnActive?(active: boolean): void;
}
