/**
 * The listener's side of one environment: one socket, or a control + stream pair (with the
 * `listener_ready` handshake when the listener sends a generation). Commands for the listener
 * go to its control socket; while it is reconnecting they wait in a bounded queue.
 */
import { WebSocket } from "ws";
import type { RelayLogger } from "./relay-options.js";
import { PONG_FRAME, readFrameFacts, type Channel, type FrameFacts } from "./relay-routing.js";

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
  maxQueuedCommands: number;
  logger: RelayLogger;
  /** A frame from a current listener socket (`channel` is the socket's, or `undefined` for a single socket). */
  onFrame(text: string, facts: FrameFacts, channel: Channel | undefined): void;
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

/** Close code for a stream socket that matches no control socket. */
const UNPAIRED_STREAM_CODE = 4409;

export class ListenerConnection {
  private single: WebSocket | undefined;
  private control: Slot | undefined;
  private stream: Slot | undefined;
  private isReady = false;
  private readonly queue: string[] = [];
  private readonly options: ListenerConnectionOptions;
  /** When the current socket (pair) became ready. */
  connectedAt: Date | undefined;
  /** How the listener is connected right now. */
  mode: "single" | "split" | "paired" | undefined;

  constructor(options: ListenerConnectionOptions) {
    this.options = options;
  }

  get ready(): boolean {
    return this.isReady;
  }

  get queuedCommands(): number {
    return this.queue.length;
  }

  /** Takes a freshly upgraded listener socket. */
  attach(socket: WebSocket, params: ListenerSocketParams): void {
    socket.on("message", (data, isBinary) => {
      if (!this.isCurrent(socket)) return;
      const text = isBinary ? undefined : data.toString();
      const facts = text === undefined ? undefined : readFrameFacts(text);
      if (text === undefined || facts === undefined) {
        this.options.logger.debug("relay: unreadable listener frame dropped", { connectionId: this.options.connectionId });
        return;
      }
      if (facts.type === "ping") {
        socket.send(PONG_FRAME);
        return;
      }
      this.options.onFrame(text, facts, params.channel === "single" ? undefined : params.channel);
    });
    socket.on("close", (code) => this.handleClose(socket, code));
    socket.on("error", () => {
      // A socket error is followed by `close`; nothing to add here.
    });

    if (params.channel === "single") this.attachSingle(socket);
    else if (params.channel === "control") this.attachControl(socket, params);
    else this.attachStream(socket, params);
  }

  /** Sends a command to the listener's control socket, or queues it while the listener is away. */
  sendCommand(text: string): "sent" | "queued" {
    const target = this.commandSocket();
    if (this.isReady && target && target.readyState === WebSocket.OPEN) {
      target.send(text);
      return "sent";
    }
    this.queue.push(text);
    if (this.queue.length > this.options.maxQueuedCommands) {
      this.queue.shift();
      this.options.logger.warn("relay: listener command queue full; oldest command dropped", {
        connectionId: this.options.connectionId,
      });
    }
    return "queued";
  }

  /** Closes the current listener sockets with `code` (queued commands are kept). */
  close(code: number, reason: string): boolean {
    const sockets = this.sockets();
    closeAll(sockets, code, reason);
    return sockets.length > 0;
  }

  /** Forgets the queued commands (the environment is gone). */
  discardQueue(): void {
    this.queue.length = 0;
  }

  /** Every socket the listener has open towards the relay. */
  sockets(): WebSocket[] {
    return [this.control?.socket, this.single, this.stream?.socket].filter((socket) => socket !== undefined);
  }

  private commandSocket(): WebSocket | undefined {
    return this.single ?? this.control?.socket;
  }

  private isCurrent(socket: WebSocket): boolean {
    return socket === this.single || socket === this.control?.socket || socket === this.stream?.socket;
  }

  private acknowledgePair(socket: WebSocket, params: ListenerSocketParams): void {
    socket.send(
      JSON.stringify({ type: "listener_ready", connection_generation: params.generation, connection_attempt: params.attempt }),
    );
  }

  private attachSingle(socket: WebSocket): void {
    const old = this.sockets();
    this.clearSlots();
    closeAll(old, 1001, "Superseded by a newer listener connection");
    this.single = socket;
    this.mode = "single";
    this.markReady();
  }

  private attachControl(socket: WebSocket, params: ListenerSocketParams): void {
    const stream = this.stream;
    // A stream socket that opened before its control socket (split mode) may pair with this one.
    const keepStream = stream !== undefined && stream.pairedWith === undefined && stream.generation === params.generation;
    const old = this.sockets().filter((other) => !(keepStream && other === stream?.socket));
    this.clearSlots();
    if (keepStream) this.stream = stream;
    closeAll(old, 1001, "Superseded by a newer listener connection");
    this.control = { socket, generation: params.generation, pairedWith: undefined };
    this.mode = params.generation === undefined ? "split" : "paired";
    if (params.generation !== undefined) this.acknowledgePair(socket, params);
    this.completePair();
  }

  private attachStream(socket: WebSocket, params: ListenerSocketParams): void {
    const paired = params.generation !== undefined;
    if ((this.control && this.control.generation !== params.generation) || (paired && !this.control)) {
      socket.close(UNPAIRED_STREAM_CODE, "Stream does not match the control socket");
      return;
    }
    const previous = this.stream?.socket;
    this.stream = { socket, generation: params.generation, pairedWith: undefined };
    if (previous) closeAll([previous], 1001, "Superseded by a newer stream socket");
    if (paired) this.acknowledgePair(socket, params);
    if (this.isReady && this.control) this.stream.pairedWith = this.control.socket;
    else this.completePair();
  }

  /** Empties every slot; reports the loss if the listener was ready. */
  private clearSlots(code = 1001): void {
    const wasReady = this.isReady;
    this.single = undefined;
    this.control = undefined;
    this.stream = undefined;
    this.isReady = false;
    if (wasReady) this.options.onDown(code);
  }

  private completePair(): void {
    const control = this.control;
    const stream = this.stream;
    if (!control || !stream || control.generation !== stream.generation) return;
    if (control.socket.readyState !== WebSocket.OPEN || stream.socket.readyState !== WebSocket.OPEN) return;
    stream.pairedWith = control.socket;
    this.markReady();
  }

  private markReady(): void {
    this.isReady = true;
    this.connectedAt = new Date();
    const target = this.commandSocket();
    const pending = this.queue.splice(0);
    for (const text of pending) target?.send(text);
    if (pending.length > 0) {
      this.options.logger.debug("relay: queued commands flushed to listener", {
        connectionId: this.options.connectionId,
        count: pending.length,
      });
    }
    this.options.onReady();
  }

  private handleClose(socket: WebSocket, code: number): void {
    if (!this.isCurrent(socket)) return;
    const partners = this.sockets().filter((other) => other !== socket);
    this.clearSlots(code);
    closeAll(partners, 1001, "Partner socket closed");
  }
}
