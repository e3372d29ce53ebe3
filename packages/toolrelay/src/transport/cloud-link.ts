import { EventEmitter } from "eventemitter3";
import { ToolrelayError, isToolrelayError } from "../errors.js";
import { systemTimers, type Timers } from "../internal/timers.js";
import { encodeFrame, type OutboundFrame } from "../wire/index.js";
import { exponentialBackoff } from "./backoff.js";
import type { CloudDeliveryStats, CloudLinkOptions, CloudRuntimeAddress } from "./cloud-link-options.js";
import { CloudGapRecovery } from "./cloud-gap-recovery.js";
import { CloudInboundDelivery } from "./cloud-inbound-delivery.js";
import { CloudPairDialer } from "./cloud-pair-dialer.js";
import { closeSocketGracefully, listenToSocketPair, pingSocket, sendText, type SocketPair } from "./cloud-socket-pair.js";
import type { CloudChannel } from "./cloud-status-address.js";
import { HeartbeatWatchdog } from "./heartbeat-watchdog.js";
import { redact } from "./open-web-socket.js";
import { ReconnectController } from "./reconnect-controller.js";
import type { LinkState, RuntimeLink, RuntimeLinkEvents } from "./runtime-link.js";

export type { CloudDeliveryStats, CloudLinkOptions, CloudRuntimeAddress } from "./cloud-link-options.js";

/** The close code a relay uses when the environment is gone (the listener's contract). */
const ENVIRONMENT_GONE_CLOSE_CODE = 1008;

/**
 * The link to a Letta Cloud environment through the status relay: a control
 * and a stream WebSocket that together count as one connection (see docs/cloud.md).
 *
 * - Open only while **both** sockets are open; frames go out on control only.
 * - Each inbound frame, strictly in arrival order: ack its `seq` on the socket
 *   it came from → drop a `stream_delta` seen on control (relay fan-out) →
 *   drop a repeated `idempotency_key` → feed `event_seq` to the gap detector
 *   (while a turn runs, a loss triggers one debounced, backed-off `sync`) → emit.
 * - A heartbeat pings both sockets, with a protocol-level ping and a JSON
 *   ping. Only an answer (a pong of either kind) is liveness, and it is owed
 *   from the moment the sockets open: every WebSocket peer answers a protocol
 *   ping, and inbound frames show only that the relay's writes reach us, not
 *   that ours reach it. A socket with no answer past the deadline, or either
 *   socket closing, terminates both and reconnects (single flight, jittered
 *   backoff): at most `pingIntervalMs + pongTimeoutMs` after the path died,
 *   also before the first pong. The runtime keeps pending calls across that,
 *   so `keepsPendingCallsAcrossReconnect` is `true`.
 */
export class CloudLink extends EventEmitter<RuntimeLinkEvents> implements RuntimeLink {
  readonly connectionId: string;
  readonly keepsPendingCallsAcrossReconnect = true;
  #epoch = 0;
  /** `options.reconnect`: reconnect after a drop, or close. */
  #reconnectAfterDrop: boolean;
  #dialer: CloudPairDialer;
  #timers: Timers;
  #state: LinkState = "idle";
  #runtime: CloudRuntimeAddress;
  #pair: SocketPair | undefined;
  #closing: Promise<void> | undefined;
  #delivery: CloudInboundDelivery;
  #recovery: CloudGapRecovery;
  #watchdog: HeartbeatWatchdog<CloudChannel>;
  #reconnect: ReconnectController;

  constructor(options: CloudLinkOptions) {
    super();
    this.#timers = options.timers ?? systemTimers;
    this.#dialer = new CloudPairDialer({ ...options, timers: this.#timers });
    this.#reconnectAfterDrop = options.reconnect !== false;
    this.connectionId = options.connectionId;
    this.#runtime = { ...options.runtime };
    this.#delivery = new CloudInboundDelivery({
      idempotencyKeyCapacity: options.idempotencyKeyCapacity,
      observeEventSeq: (eventSeq) => this.#recovery.observe(eventSeq),
    });
    this.#recovery = new CloudGapRecovery({
      timers: this.#timers,
      reorderWindowMs: options.gapReorderWindowMs,
      debounceMs: options.syncDebounceMs,
      minIntervalMs: options.syncMinIntervalMs,
      maxIntervalMs: options.syncMaxIntervalMs,
      runtime: () => this.#runtime,
      send: (frame) => {
        const control = this.#pair?.control;
        if (this.#state !== "open" || control === undefined) return false;
        return sendText(control, encodeFrame(frame));
      },
    });
    this.#watchdog = new HeartbeatWatchdog<CloudChannel>({
      channels: ["control", "stream"],
      pingIntervalMs: options.pingIntervalMs,
      pongTimeoutMs: options.pongTimeoutMs,
      // Held to the deadline from the first byte: a WebSocket peer must answer a protocol ping
      // (RFC 6455, 5.5.2), so silence after one is a dead path, pong or no pong before it.
      deadlineFromStart: true,
      // Only an answer proves the relay hears us: with the SDK → relay direction dead, the relay's
      // frames (and pings) still arrive while every answer written is lost.
      proof: "answers",
      timers: this.#timers,
      sendPing: (channel) => {
        const socket = this.#pair?.[channel];
        if (socket) pingSocket(socket);
      },
      onTimeout: (channel, silentForMs) => {
        const pair = this.#pair;
        if (pair)
          this.#guard(() =>
            this.#drop(pair, `no answer to a ping on the ${channel} socket for ${silentForMs} ms: link presumed half-open`),
          );
      },
    });
    this.#reconnect = new ReconnectController({
      backoff: exponentialBackoff(options.backoff),
      timers: this.#timers,
      attempt: () => this.#open(),
      onReconnected: () => {
        if (this.#pair === undefined) return this.#reconnect.schedule();
        this.#setState("open");
        this.emit("reconnected");
      },
      onAttemptFailed: (error) => this.#emitError(isToolrelayError(error) ? error : this.#wrap(error)),
      isFatal: (error) => isToolrelayError(error, "UNAUTHORIZED") || isToolrelayError(error, "NOT_FOUND"),
      onGiveUp: () => void this.close(),
    });
  }

  get state(): LinkState {
    return this.#state;
  }

  get epoch(): number {
    return this.#epoch;
  }

  /** The runtime used in socket URLs and gap syncs. */
  get runtime(): Readonly<CloudRuntimeAddress> {
    return { ...this.#runtime };
  }

  get deliveryStats(): Readonly<CloudDeliveryStats> {
    return { ...this.#delivery.counts, gapsDetected: this.#recovery.gapsDetected, syncsSent: this.#recovery.syncsSent };
  }

  /**
   * Tell the link whether a turn is running. Gap syncs are sent only while
   * one is (an idle session sends none), and each new turn resets their
   * back-off. Default: no turn.
   */
  setTurnActive(active: boolean): void {
    this.#recovery.setTurnActive(active);
  }

  /**
   * Record the runtime once it is known (e.g. after `runtime_start` created the
   * conversation). Used for the next reconnect's URLs and for gap syncs; the
   * open sockets are not touched.
   */
  setRuntime(runtime: CloudRuntimeAddress): void {
    this.#runtime = { ...this.#runtime, ...runtime };
  }

  async connect(): Promise<void> {
    if (this.#state !== "idle") throw new ToolrelayError("INVALID_OPTIONS", `connect() called in state ${this.#state}`);
    this.#setState("connecting");
    try {
      await this.#open();
    } catch (error) {
      this.#setState("closed");
      throw isToolrelayError(error) ? error : this.#wrap(error);
    }
    if (this.#closing !== undefined || this.#pair === undefined) {
      await this.close();
      throw new ToolrelayError("ABORTED", "the cloud link was closed while connecting");
    }
    this.#setState("open");
  }

  send(frame: OutboundFrame, trusted = false): boolean {
    const control = this.#pair?.control;
    if (this.#state !== "open" || control === undefined || control.readyState !== 1) return false;
    const text = encodeFrame(frame, trusted);
    if (frame.type === "sync") this.#recovery.markSent();
    return sendText(control, text);
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    this.#reconnect.stop();
    this.#watchdog.stop();
    this.#recovery.stop();
    const pair = this.#pair;
    this.#pair = undefined;
    this.#setState("closed");
    if (pair) await Promise.all([closeSocketGracefully(pair.control, this.#timers), closeSocketGracefully(pair.stream, this.#timers)]);
  }

  async #open(): Promise<void> {
    const pair = await this.#dialer.dial(this.#runtime);
    if (this.#closing !== undefined) {
      pair.control.terminate();
      pair.stream.terminate();
      return;
    }
    this.#attach(pair);
  }

  #attach(pair: SocketPair): void {
    this.#pair = pair;
    this.#epoch++;
    this.#recovery.connected();
    listenToSocketPair(
      pair,
      {
        message: (channel, text) => this.#receive(pair, channel, text),
        ping: (channel) => {
          if (pair === this.#pair) this.#watchdog.received(channel);
        },
        pong: (channel) => {
          if (pair === this.#pair) this.#watchdog.answered(channel);
        },
        close: (channel, code, detail) => {
          if (code === ENVIRONMENT_GONE_CLOSE_CODE) this.#guard(() => this.#environmentGone(pair, detail));
          else this.#guard(() => this.#drop(pair, `${channel} socket closed (code ${code}${detail ? `: ${detail}` : ""})`));
        },
      },
      this.#dialer.secrets,
    );
    this.#watchdog.start();
  }

  /** One inbound frame, in order. Never throws (it runs inside a socket callback). */
  #receive(pair: SocketPair, channel: CloudChannel, text: string | undefined): void {
    if (pair !== this.#pair) return;
    this.#guard(() => {
      this.#watchdog.received(channel);
      if (text === undefined) {
        this.emit("invalid-frame", `binary frame on the ${channel} socket`);
        return;
      }
      const decoded = this.#delivery.accept(pair, channel, text);
      if (decoded === undefined) return;
      if (decoded.kind === "frame") {
        if (decoded.frame.type === "pong") this.#watchdog.answered(channel);
        else this.emit("frame", decoded.frame, decoded.envelope);
      } else if (decoded.kind === "unknown") this.emit("unknown-frame", decoded.type);
      else this.emit("invalid-frame", decoded.error, { type: decoded.type, requestId: decoded.requestId });
    });
  }

  /** Run a socket-callback step; a throwing event listener is reported, never re-thrown into `ws` or a timer. */
  #guard(step: () => void): void {
    try {
      step();
    } catch (error) {
      this.#listenerThrew(error);
    }
  }

  #listenerThrew(error: unknown): void {
    this.#emitError(
      new ToolrelayError("LISTENER_FAILED", `a link event listener threw: ${redact(String(error), this.#dialer.secrets)}`, {
        cause: error,
      }),
    );
  }

  /**
   * Close 1008: the environment is gone (its listener registered again under a
   * new connection id). Reconnecting to this connection id cannot work: close
   * the link for good with a clear error.
   */
  #environmentGone(pair: SocketPair, detail: string): void {
    if (pair !== this.#pair) return;
    this.#emitError(
      new ToolrelayError(
        "NOT_FOUND",
        `cloud environment ${this.connectionId} is gone (close 1008${detail ? `: ${detail}` : ""}); its listener registered again under a new connection id: start a new session`,
      ),
    );
    void this.close();
  }

  /** Either socket closed, or the watchdog gave up: end both and reconnect. */
  #drop(pair: SocketPair, why: string): void {
    if (pair !== this.#pair) return;
    this.#pair = undefined;
    this.#watchdog.stop();
    this.#recovery.dropped();
    pair.control.terminate();
    pair.stream.terminate();
    if (this.#closing !== undefined || this.#state === "closed") return;
    this.#emitError(new ToolrelayError("CONNECTION_CLOSED", `cloud link dropped: ${why}`));
    if (!this.#reconnectAfterDrop) {
      void this.close();
      return;
    }
    this.#setState("reconnecting");
    this.#reconnect.schedule();
  }

  #wrap(error: unknown): ToolrelayError {
    const message = error instanceof Error ? error.message : String(error);
    return new ToolrelayError("CONNECT_FAILED", redact(`cloud link failed: ${message}`, this.#dialer.secrets), { cause: error });
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
    this.emit("state", state, previous);
  }
}
