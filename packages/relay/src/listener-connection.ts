/**
 * The listener's side of one environment: one socket, or a control + stream pair (with the
 * `listener_ready` handshake when the listener sends a generation). Commands for the listener
 * go to its control socket; while it is reconnecting they wait in a queue bounded in count and
 * bytes. When the listener does not take what is written to it fast enough, the environment is
 * told to stop reading its SDK sockets (`onCongestion`) until half of it has drained.
 */
import { WebSocket } from "ws";
import type { Timers } from "toolrelay/protocol";
import type { FairScheduler } from "./fair-scheduler.js";
import { InboundQueue } from "./inbound-queue.js";
import { turnWrites } from "./turn-write-batch.js";
import { RELAY_CLOSE } from "./relay-close-codes.js";
import type { RelayFrame } from "./relay-frame.js";
import type { RelayLogger } from "./relay-options.js";
import { PONG_FRAME, type Channel } from "./relay-routing.js";

/** What the listener asked for on its upgrade URL. */
export interface ListenerSocketParams {
  /** `single` when the URL had no `channel`. */
  channel: "single" | Channel;
  /** `connectionGeneration` (paired mode only). */
  generation: string | undefined;
  /** `connectionAttempt` (paired mode only). */
  attempt: number | undefined;
}

export interface ListenerConnectionOptions {
  connectionId: string;
  /** The tenant that owns the environment (the scheduler's group for its sockets). */
  tenant: string;
  scheduler: FairScheduler;
  maxQueuedCommands: number;
  maxQueuedCommandBytes: number;
  maxBufferedBytes: number;
  logger: RelayLogger;
  /** For `connectedAt`. */
  timers: Timers;
  /** A frame from a current listener socket (`channel` is the socket's, or `undefined` for a single socket). */
  onFrame(frame: RelayFrame, channel: Channel | undefined): void;
  /** The listener's write buffer went over (true) or back under half of (false) `maxBufferedBytes`. */
  onCongestion(congested: boolean): void;
  /** The listener can take commands now. */
  onReady(): void;
  /** The listener was ready and lost its sockets. */
  onDown(code: number): void;
}

interface Slot {
  socket: WebSocket;
  generation: string | undefined;
  /** For the stream slot: the control socket it was paired with. */
  pairedWith: WebSocket | undefined;
}

function closeAll(sockets: WebSocket[], code: number, reason: string): void {
  for (const socket of sockets) {
    if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) socket.close(code, reason);
  }
}

/** What {@link ListenerConnection.sendCommand} did with a command. */
export type CommandDelivery = "sent" | "queued" | "refused";

export class ListenerConnection {
  #single: WebSocket | undefined;
  #control: Slot | undefined;
  #stream: Slot | undefined;
  #isReady = false;
  #queue: RelayFrame[] = [];
  #queuedBytes = 0;
  #queues = new Map<WebSocket, InboundQueue>();
  /**
   * Sockets the relay closed because their partner went away: what they sent until their close
   * completes still counts (the listener wrote it once and will not write it again).
   */
  #draining = new Set<WebSocket>();
  #congested = false;
  #options: ListenerConnectionOptions;
  /** When the current socket (pair) became ready. */
  connectedAt: Date | undefined;
  /** How the listener is connected right now. */
  mode: "single" | "split" | "paired" | undefined;

  constructor(options: ListenerConnectionOptions) {
    this.#options = options;
  }

  get ready(): boolean {
    return this.#isReady;
  }

  get queuedCommands(): number {
    return this.#queue.length;
  }

  /** Whether the relay stopped reading the environment's SDK sockets because the listener is slow to read. */
  get congested(): boolean {
    return this.#congested;
  }

  /** Takes a freshly upgraded listener socket. */
  attach(socket: WebSocket, params: ListenerSocketParams): void {
    const channel = params.channel === "single" ? undefined : params.channel;
    const queue = new InboundQueue({
      socket,
      scheduler: this.#options.scheduler,
      group: this.#options.tenant,
      handle: (frame) => {
        if (!frame) {
          this.#options.logger.debug("relay: unreadable listener frame dropped", { connectionId: this.#options.connectionId });
          return;
        }
        // The listener reconnects after three missed pongs: its JSON pings are always answered.
        if (frame.type === "ping") {
          if (socket.readyState === WebSocket.OPEN) socket.send(PONG_FRAME, { binary: false });
          return;
        }
        this.#options.onFrame(frame, channel);
      },
    });
    this.#queues.set(socket, queue);
    socket.on("message", (data, isBinary) => {
      // Whether a frame counts is decided on arrival: frames a socket sent before it was replaced still do.
      if (isBinary || !(this.#isCurrent(socket) || this.#draining.has(socket))) return;
      queue.push(data as Buffer);
    });
    socket.on("close", (code) => {
      this.#queues.delete(socket);
      this.#draining.delete(socket);
      this.#handleClose(socket, code);
    });
    socket.on("error", () => {
      // A socket error is followed by `close`; nothing to add here.
    });

    if (params.channel === "single") this.#attachSingle(socket);
    else if (params.channel === "control") this.#attachControl(socket, params);
    else this.#attachStream(socket, params);
  }

  /**
   * Sends a command to the listener's control socket, or queues it while the listener is away.
   * A full queue refuses it — except a tool answer (`always`), which is bounded by the
   * outstanding calls it answers.
   */
  sendCommand(frame: RelayFrame, options: { always?: boolean | undefined } = {}): CommandDelivery {
    const target = this.#commandSocket();
    if (this.#isReady && target && target.readyState === WebSocket.OPEN) {
      this.#write(target, frame.data);
      return "sent";
    }
    const full =
      this.#queue.length >= this.#options.maxQueuedCommands || this.#queuedBytes + frame.size > this.#options.maxQueuedCommandBytes;
    if (full && !options.always) {
      this.#options.logger.warn("relay: listener command queue full; command refused", { connectionId: this.#options.connectionId });
      return "refused";
    }
    const kept = frame.retain();
    this.#queue.push(kept);
    this.#queuedBytes += kept.size;
    return "queued";
  }

  /** Closes the current listener sockets with `code` (queued commands are kept). */
  close(code: number, reason: string): boolean {
    const sockets = this.sockets();
    closeAll(sockets, code, reason);
    return sockets.length > 0;
  }

  /** Forgets the queued commands and every unprocessed frame (the environment is gone). */
  discardQueue(): void {
    this.#queue.length = 0;
    this.#queuedBytes = 0;
    this.#draining.clear();
    for (const queue of this.#queues.values()) queue.discard();
  }

  /** Every socket the listener has open towards the relay. */
  sockets(): WebSocket[] {
    return [this.#control?.socket, this.#single, this.#stream?.socket].filter((socket) => socket !== undefined);
  }

  #write(socket: WebSocket, data: Buffer): void {
    turnWrites.beforeWrite(socket);
    socket.send(data, { binary: false }, () => this.#checkDrained(socket));
    if (!this.#congested && socket.bufferedAmount > this.#options.maxBufferedBytes) {
      this.#congested = true;
      this.#options.logger.info("relay: listener is not taking frames fast enough; SDK sockets paused", {
        connectionId: this.#options.connectionId,
      });
      this.#options.onCongestion(true);
    }
  }

  #checkDrained(socket: WebSocket): void {
    if (!this.#congested) return;
    if (socket.readyState === WebSocket.OPEN && socket.bufferedAmount > this.#options.maxBufferedBytes / 2) return;
    this.#congested = false;
    this.#options.onCongestion(false);
  }

  #commandSocket(): WebSocket | undefined {
    return this.#single ?? this.#control?.socket;
  }

  #isCurrent(socket: WebSocket): boolean {
    return socket === this.#single || socket === this.#control?.socket || socket === this.#stream?.socket;
  }

  #acknowledgePair(socket: WebSocket, params: ListenerSocketParams): void {
    socket.send(JSON.stringify({ type: "listener_ready", connection_generation: params.generation, connection_attempt: params.attempt }));
  }

  #attachSingle(socket: WebSocket): void {
    const old = this.sockets();
    this.#clearSlots();
    closeAll(old, 1001, "Superseded by a newer listener connection");
    this.#single = socket;
    this.mode = "single";
    this.#markReady();
  }

  #attachControl(socket: WebSocket, params: ListenerSocketParams): void {
    const stream = this.#stream;
    // A stream socket that opened before its control socket (split mode) may pair with this one.
    const keepStream = stream !== undefined && stream.pairedWith === undefined && stream.generation === params.generation;
    const old = this.sockets().filter((other) => !(keepStream && other === stream?.socket));
    this.#clearSlots();
    if (keepStream) this.#stream = stream;
    closeAll(old, 1001, "Superseded by a newer listener connection");
    this.#control = { socket, generation: params.generation, pairedWith: undefined };
    this.mode = params.generation === undefined ? "split" : "paired";
    if (params.generation !== undefined) this.#acknowledgePair(socket, params);
    this.#completePair();
  }

  #attachStream(socket: WebSocket, params: ListenerSocketParams): void {
    const paired = params.generation !== undefined;
    if ((this.#control && this.#control.generation !== params.generation) || (paired && !this.#control)) {
      socket.close(RELAY_CLOSE.unpairedStream.code, RELAY_CLOSE.unpairedStream.reason);
      return;
    }
    const previous = this.#stream?.socket;
    this.#stream = { socket, generation: params.generation, pairedWith: undefined };
    if (previous) closeAll([previous], 1001, "Superseded by a newer stream socket");
    if (paired) this.#acknowledgePair(socket, params);
    if (this.#isReady && this.#control) this.#stream.pairedWith = this.#control.socket;
    else this.#completePair();
  }

  /** Empties every slot; reports the loss if the listener was ready. */
  #clearSlots(code = 1001): void {
    const wasReady = this.#isReady;
    this.#single = undefined;
    this.#control = undefined;
    this.#stream = undefined;
    this.#isReady = false;
    if (this.#congested) {
      this.#congested = false;
      this.#options.onCongestion(false);
    }
    if (wasReady) this.#options.onDown(code);
  }

  #completePair(): void {
    const control = this.#control;
    const stream = this.#stream;
    if (!control || !stream || control.generation !== stream.generation) return;
    if (control.socket.readyState !== WebSocket.OPEN || stream.socket.readyState !== WebSocket.OPEN) return;
    stream.pairedWith = control.socket;
    this.#markReady();
  }

  #markReady(): void {
    this.#isReady = true;
    this.connectedAt = new Date(this.#options.timers.now());
    const target = this.#commandSocket();
    const pending = this.#queue.splice(0);
    this.#queuedBytes = 0;
    for (const frame of pending) if (target) this.#write(target, frame.data);
    if (pending.length > 0) {
      this.#options.logger.debug("relay: queued commands flushed to listener", {
        connectionId: this.#options.connectionId,
        count: pending.length,
      });
    }
    this.#options.onReady();
  }

  #handleClose(socket: WebSocket, code: number): void {
    if (!this.#isCurrent(socket)) return;
    const partners = this.sockets().filter((other) => other !== socket);
    this.#clearSlots(code);
    for (const partner of partners) this.#draining.add(partner);
    closeAll(partners, 1001, "Partner socket closed");
  }
}
