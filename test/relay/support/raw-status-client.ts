/**
 * A raw-`ws` SDK client of the relay: the two status sockets of one session, acking every `seq`
 * (unless told not to), with a frame log per channel. Deliberately not the SDK's transport, so
 * relay tests do not depend on it.
 */
import { WebSocket } from "ws";
import { FrameLog, waitForClose, waitForOpen, type JsonFrame } from "./frame-log.js";

export interface RawStatusClientOptions {
  /** Relay WebSocket base, `ws://127.0.0.1:PORT`. */
  url: string;
  connectionId: string;
  apiKey?: string;
  agentId?: string;
  conversationId?: string;
  sessionId?: string;
  /** Ack every frame that carries a `seq`. Default true. */
  autoAck?: boolean;
  /** Extra headers on both upgrades. */
  headers?: Record<string, string>;
}

export type StatusChannel = "control" | "stream";

export class RawStatusClient {
  readonly control: WebSocket;
  readonly stream: WebSocket;
  readonly logs: Record<StatusChannel, FrameLog> = { control: new FrameLog(), stream: new FrameLog() };
  /** Every `seq` received, per channel, in arrival order. */
  readonly seqs: Record<StatusChannel, number[]> = { control: [], stream: [] };
  autoAck: boolean;

  private constructor(options: RawStatusClientOptions) {
    this.autoAck = options.autoAck ?? true;
    this.control = this.openSocket(options, "control");
    this.stream = this.openSocket(options, "stream");
  }

  /** Opens both sockets and waits until both are open. */
  static async connect(options: RawStatusClientOptions): Promise<RawStatusClient> {
    const client = new RawStatusClient(options);
    try {
      await Promise.all([waitForOpen(client.control), waitForOpen(client.stream)]);
    } catch (error) {
      client.terminate();
      throw error;
    }
    return client;
  }

  static statusUrl(options: RawStatusClientOptions, channel: StatusChannel): string {
    const url = new URL(`${options.url}/v1/environments/${encodeURIComponent(options.connectionId)}/status/ws`);
    url.searchParams.set("channel", channel);
    if (options.agentId) url.searchParams.set("agentId", options.agentId);
    if (options.conversationId) url.searchParams.set("conversationId", options.conversationId);
    if (options.sessionId) url.searchParams.set("sessionId", options.sessionId);
    return url.toString();
  }

  private openSocket(options: RawStatusClientOptions, channel: StatusChannel): WebSocket {
    const headers: Record<string, string> = { ...options.headers };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    const socket = new WebSocket(RawStatusClient.statusUrl(options, channel), { headers });
    socket.on("error", () => {});
    this.logs[channel].attach(socket, (frame) => {
      if (typeof frame.seq === "number") {
        this.seqs[channel].push(frame.seq);
        if (this.autoAck) socket.send(JSON.stringify({ type: "ack", seq: frame.seq }));
      }
    });
    return socket;
  }

  /** Sends a command on the control socket. */
  send(frame: JsonFrame): void {
    this.control.send(JSON.stringify(frame));
  }

  sendOn(channel: StatusChannel, frame: JsonFrame): void {
    (channel === "control" ? this.control : this.stream).send(JSON.stringify(frame));
  }

  ack(channel: StatusChannel, seq: number): void {
    this.sendOn(channel, { type: "ack", seq });
  }

  waitFor(
    type: string,
    options: { channel?: StatusChannel; timeoutMs?: number; from?: number; where?: (frame: JsonFrame) => boolean } = {},
  ): Promise<JsonFrame> {
    return this.logs[options.channel ?? "control"].waitForType(type, options);
  }

  /** Round-trips a ping on `channel`: everything sent on it before has been processed by the relay. */
  async flush(channel: StatusChannel): Promise<void> {
    const from = this.logs[channel].frames.length;
    this.sendOn(channel, { type: "ping" });
    await this.logs[channel].waitForType("pong", { from });
  }

  /** Closes both sockets and waits for them to be closed. */
  async close(): Promise<void> {
    const closing = [this.control, this.stream].map((socket) => {
      if (socket.readyState === WebSocket.CLOSED) return Promise.resolve();
      const closed = waitForClose(socket, 2_000).then(
        () => undefined,
        () => socket.terminate(),
      );
      socket.close(1000, "test done");
      return closed;
    });
    await Promise.all(closing);
  }

  terminate(): void {
    this.control.terminate();
    this.stream.terminate();
  }
}
