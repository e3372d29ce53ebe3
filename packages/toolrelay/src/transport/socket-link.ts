import { EventEmitter } from "eventemitter3";
import type { RawData } from "ws";
import type WebSocket from "ws";
import { ToolrelayError, isToolrelayError } from "../errors.js";
import { decodeFrame, encodeFrame, type OutboundFrame } from "../wire/index.js";
import { exponentialBackoff } from "./backoff.js";
import { HeartbeatWatchdog } from "./heartbeat-watchdog.js";
import { closeSocketGracefully, openLinkSockets, pingSocket, type LinkSockets, type RawMessage } from "./link-sockets.js";
import { redact } from "./open-web-socket.js";
import { ReconnectController } from "./reconnect-controller.js";
import type { LinkState, RuntimeLink, RuntimeLinkEvents } from "./runtime-link.js";
import type { DeliveryRules, SocketLinkOptions } from "./socket-link-options.js";
import { beforeWrite } from "./tick-write-batch.js";

/**
 * The one implementation of a {@link RuntimeLink} over WebSockets, for the local app-server's socket
 * and the cloud relay's control + stream pair alike (docs/protocol.md#how-the-links-are-built):
 *
 * - **Connect**: one socket per channel, opened together; the link is open only while all are. A
 *   frame that arrives before all are open is kept and read first. `connect()` resolves once the
 *   first connection opened; one that drops right away is a drop like any other.
 * - **Inbound**: each text frame, in arrival order, on the socket's own `message` callback: the
 *   heartbeat notes it, it is decoded (through the rules, when the link has them), a JSON `pong`
 *   answers a ping, anything else is emitted. A throwing listener is reported, never thrown into `ws`.
 * - **Outbound**: checked (unless trusted), encoded and written on the first channel, with the
 *   tick's other writes (`tick-write-batch.ts`).
 * - **Drop**: any socket closing, or the heartbeat giving up, ends them all; a single-flight,
 *   jittered reconnect follows (or the link closes). `connectionId` survives it; `epoch` counts it.
 * - **Close**: for good, idempotent; each socket closes with 1000, terminated after 1 s.
 */
export class SocketLink<Channel extends string> extends EventEmitter<RuntimeLinkEvents> implements RuntimeLink {
  readonly connectionId: string;
  readonly keepsPendingCallsAcrossReconnect: boolean;
  #options: SocketLinkOptions<Channel>;
  #rules: DeliveryRules<Channel> | undefined;
  #state: LinkState = "idle";
  #epoch = 0;
  #sockets: LinkSockets<Channel> | undefined;
  /** The socket frames are written on (the first channel's), while `#sockets` are attached. */
  #writer: WebSocket | undefined;
  #closing: Promise<void> | undefined;
  #watchdog: HeartbeatWatchdog<Channel>;
  #reconnect: ReconnectController;

  constructor(options: SocketLinkOptions<Channel>) {
    super();
    this.#options = options;
    this.#rules = options.rules;
    this.connectionId = options.connectionId;
    this.keepsPendingCallsAcrossReconnect = options.keepsPendingCallsAcrossReconnect;
    const { heartbeat } = options;
    this.#watchdog = new HeartbeatWatchdog<Channel>({
      channels: options.channels,
      pingIntervalMs: heartbeat.pingIntervalMs,
      pongTimeoutMs: heartbeat.pongTimeoutMs,
      deadlineFromStart: true,
      proof: heartbeat.proof,
      timers: options.timers,
      sendPing: (channel) => {
        const socket = this.#sockets?.[channel];
        if (socket) pingSocket(socket, heartbeat.jsonPing);
      },
      onTimeout: (channel, silentForMs) => {
        const sockets = this.#sockets;
        const why =
          heartbeat.proof === "answers"
            ? `no answer to a ping on the ${channel} socket for ${silentForMs} ms: link presumed half-open`
            : `no traffic on the ${channel} socket for ${silentForMs} ms after a ping: link presumed dead`;
        if (sockets) this.#drop(sockets, why);
      },
    });
    this.#reconnect = new ReconnectController({
      backoff: exponentialBackoff(options.backoff),
      timers: options.timers,
      attempt: () => this.#open(),
      onReconnected: () => {
        // The new sockets closed before the attempt's end was reported: try again.
        if (this.#sockets === undefined) {
          this.#reconnect.schedule();
          return;
        }
        this.#setState("open");
        this.#emitEvent("reconnected");
      },
      onAttemptFailed: (error) => this.#emitError(this.#asLinkError(error)),
      isFatal: (error) => options.fatal.some((code) => isToolrelayError(error, code)),
      onGiveUp: () => void this.close(),
    });
  }

  get state(): LinkState {
    return this.#state;
  }

  get epoch(): number {
    return this.#epoch;
  }

  async connect(): Promise<void> {
    if (this.#state !== "idle") throw new ToolrelayError("INVALID_OPTIONS", `connect() called in state ${this.#state}`);
    this.#setState("connecting");
    try {
      await this.#open();
    } catch (error) {
      this.#setState("closed");
      throw this.#asLinkError(error);
    }
    if (this.#closing !== undefined) {
      await this.close();
      throw new ToolrelayError("ABORTED", `the ${this.#options.name} link was closed while connecting`);
    }
    // Open, unless the connection dropped right after opening (a socket closed with the last
    // handshake's answer): then the reconnect is under way, as after any drop.
    if (this.#sockets !== undefined) this.#setState("open");
  }

  send(frame: OutboundFrame, trusted = false): boolean {
    const socket = this.#writer;
    if (this.#state !== "open" || socket === undefined || socket.readyState !== 1) return false;
    const text = encodeFrame(frame, trusted);
    this.#rules?.sending(frame);
    // Written here rather than through writeText: one call less on every answer's way out.
    beforeWrite(socket);
    try {
      socket.send(text);
      return true;
    } catch {
      // A failed write surfaces as the socket closing.
      return false;
    }
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    this.#reconnect.stop();
    this.#watchdog.stop();
    this.#rules?.closed();
    const sockets = this.#sockets;
    this.#sockets = undefined;
    this.#writer = undefined;
    this.#setState("closed");
    if (sockets) await Promise.all(this.#options.channels.map((channel) => closeSocketGracefully(sockets[channel], this.#options.timers)));
  }

  /** One connection attempt: open every socket, and attach them as the last one opens (unless the link was closed meanwhile). */
  async #open(): Promise<void> {
    const options = this.#options;
    await openLinkSockets({
      ...options.address(),
      channels: options.channels,
      onOpen: ({ sockets, takeEarly }) => {
        if (this.#closing === undefined) this.#attach(sockets, takeEarly);
        else for (const channel of options.channels) sockets[channel].terminate();
      },
      WebSocket: options.WebSocket,
      maxPayload: options.maxPayload,
      connectTimeoutMs: options.connectTimeoutMs,
      timers: options.timers,
      secrets: options.secrets,
    });
  }

  #attach(sockets: LinkSockets<Channel>, takeEarly: (channel: Channel) => RawMessage[]): void {
    this.#sockets = sockets;
    this.#writer = sockets[this.#options.channels[0]];
    this.#epoch++;
    this.#rules?.connected(sockets);
    const receivers = this.#options.channels.map((channel) => {
      const socket = sockets[channel];
      // The whole inbound path of a frame, in the socket's own callback (no call more than it needs).
      const receive = (data: RawData, isBinary: boolean): void => {
        if (sockets !== this.#sockets) return;
        try {
          this.#watchdog.received(channel);
          if (isBinary) {
            this.emit("invalid-frame", `binary frame on the ${channel} socket`);
            return;
          }
          const text = textOf(data);
          const decoded = this.#rules === undefined ? decodeFrame(text) : this.#rules.accept(channel, text);
          if (decoded === undefined) return;
          if (decoded.kind === "frame") {
            if (decoded.frame.type === "pong") this.#watchdog.answered(channel);
            else this.emit("frame", decoded.frame, decoded.envelope);
          } else if (decoded.kind === "unknown") this.emit("unknown-frame", decoded.type);
          else this.emit("invalid-frame", decoded.error, { type: decoded.type, requestId: decoded.requestId });
        } catch (error) {
          this.#listenerThrew("frame", error);
        }
      };
      socket.on("message", receive);
      socket.on("ping", () => {
        if (sockets === this.#sockets) this.#watchdog.received(channel);
      });
      socket.on("pong", () => {
        if (sockets === this.#sockets) this.#watchdog.answered(channel);
      });
      let lastError = "";
      socket.on("error", (error) => {
        lastError = error.message;
      });
      socket.on("close", (code, reason) => {
        const detail = redact([reason.toString(), lastError].filter(Boolean).join("; "), this.#options.secrets);
        this.#closed(sockets, channel, code, detail);
      });
      return { channel, receive };
    });
    // The frames that came before every socket was open: each socket's in arrival order, before any later one.
    for (const { channel, receive } of receivers) for (const early of takeEarly(channel)) receive(early.data, early.isBinary);
    this.#watchdog.start();
  }

  /** A socket of `sockets` closed. */
  #closed(sockets: LinkSockets<Channel>, channel: Channel, code: number, detail: string): void {
    if (sockets !== this.#sockets) return;
    const final = this.#options.finalClose?.(code, detail);
    if (final === undefined) {
      this.#drop(sockets, `${channel} socket closed (code ${code}${detail ? `: ${detail}` : ""})`);
      return;
    }
    this.#emitError(final);
    void this.close();
  }

  /** A socket closed, or the heartbeat gave up: end them all, then reconnect (or close). */
  #drop(sockets: LinkSockets<Channel>, why: string): void {
    if (sockets !== this.#sockets) return;
    this.#sockets = undefined;
    this.#writer = undefined;
    this.#watchdog.stop();
    this.#rules?.dropped();
    for (const channel of this.#options.channels) sockets[channel].terminate();
    if (this.#closing !== undefined || this.#state === "closed") return;
    this.#emitError(new ToolrelayError("CONNECTION_CLOSED", `${this.#options.name} link dropped: ${why}`));
    if (!this.#options.reconnect) {
      void this.close();
      return;
    }
    this.#setState("reconnecting");
    this.#reconnect.schedule();
  }

  #listenerThrew(kind: "frame" | "event", error: unknown): void {
    const message = `a link ${kind} listener threw: ${redact(String(error), this.#options.secrets)}`;
    this.#emitError(new ToolrelayError("LISTENER_FAILED", message, { cause: error }));
  }

  #asLinkError(error: unknown): ToolrelayError {
    if (isToolrelayError(error)) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new ToolrelayError("CONNECT_FAILED", redact(`${this.#options.name} link failed: ${message}`, this.#options.secrets), {
      cause: error,
    });
  }

  #emitError(error: ToolrelayError): void {
    try {
      this.emit("error", error);
    } catch {
      // An error listener that throws must not break the link.
    }
  }

  #setState(state: LinkState): void {
    const previous = this.#state;
    if (previous === state) return;
    this.#state = state;
    this.#emitEvent("state", state, previous);
  }

  /**
   * Emit a `state` or `reconnected` event. A listener that throws is reported (LISTENER_FAILED) and
   * the link carries on: it runs inside socket and timer callbacks, and mid-way through a drop.
   */
  #emitEvent<Name extends "state" | "reconnected">(name: Name, ...args: RuntimeLinkEvents[Name]): void {
    try {
      (this.emit as (name: Name, ...args: RuntimeLinkEvents[Name]) => boolean)(name, ...args);
    } catch (error) {
      this.#listenerThrew("event", error);
    }
  }
}

/**
 * The text of a `ws` text message (a Buffer, unless a custom socket class hands over fragments or an
 * ArrayBuffer). `toString()` without an argument is UTF-8 and takes Buffer's fast path.
 */
function textOf(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString();
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString();
  return data.toString();
}
