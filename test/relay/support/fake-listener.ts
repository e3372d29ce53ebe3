/**
 * A listener made of raw sockets, for the relay's unit tests: registers like Letta Code does,
 * then connects in the mode the relay offers (or a forced one) — one socket, control + stream,
 * or paired with the `listener_ready` handshake. The real listener is used in integration/.
 */
import { randomUUID } from "node:crypto";
import { WebSocket } from "ws";
import { FrameLog, waitForOpen, type JsonFrame } from "./frame-log.js";
import { httpJson } from "./http-json.js";

export type FakeListenerMode = "single" | "split" | "paired";

export interface RegisterAnswer {
  connectionId: string;
  wsUrl: string;
  supportsSplitStatusChannels: boolean;
  supportsPairedListenerGenerations: boolean;
}

export async function registerListener(
  httpUrl: string,
  apiKey: string | undefined,
  body: Record<string, unknown>,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  const { status, json } = await httpJson(`${httpUrl}/v1/environments/register`, { method: "POST", headers, body });
  return { status, json: json as Record<string, unknown> };
}

export class FakeListener {
  readonly deviceId: string;
  readonly listenerInstanceId: string;
  answer!: RegisterAnswer;
  mode!: FakeListenerMode;
  /** Frames the relay sent, per listener channel (`control` also holds everything in single mode). */
  readonly logs = { control: new FrameLog(), stream: new FrameLog() };
  control: WebSocket | undefined;
  stream: WebSocket | undefined;
  /** Close codes the relay sent to the control (or single) socket, in order. */
  readonly closeCodes: number[] = [];
  private generationAttempt = 0;

  private constructor(
    private readonly httpUrl: string,
    private readonly apiKey: string | undefined,
    options: { deviceId?: string; listenerInstanceId?: string },
  ) {
    this.deviceId = options.deviceId ?? `device-${randomUUID()}`;
    this.listenerInstanceId = options.listenerInstanceId ?? "server-test";
  }

  /** Registers and connects. `mode` forces a mode; default: what the relay offered. */
  static async start(
    httpUrl: string,
    apiKey: string | undefined,
    options: { mode?: FakeListenerMode; deviceId?: string; listenerInstanceId?: string; connectionName?: string } = {},
  ): Promise<FakeListener> {
    const listener = new FakeListener(httpUrl, apiKey, options);
    await listener.register(options.connectionName ?? "fake-env");
    listener.mode =
      options.mode ??
      (listener.answer.supportsPairedListenerGenerations ? "paired" : listener.answer.supportsSplitStatusChannels ? "split" : "single");
    await listener.connect();
    return listener;
  }

  async register(connectionName = "fake-env"): Promise<RegisterAnswer> {
    const { status, json } = await registerListener(this.httpUrl, this.apiKey, {
      deviceId: this.deviceId,
      listenerInstanceId: this.listenerInstanceId,
      connectionName,
      metadata: { environmentMessageProtocol: "v2-input" },
    });
    if (status !== 200) throw new Error(`register failed with HTTP ${status}`);
    this.answer = json as unknown as RegisterAnswer;
    return this.answer;
  }

  private socketUrl(channel: "control" | "stream" | undefined, generation?: string, attempt?: number): string {
    const url = new URL(this.answer.wsUrl);
    url.searchParams.set("deviceId", this.deviceId);
    url.searchParams.set("connectionName", "fake-env");
    if (channel) url.searchParams.set("channel", channel);
    if (generation) {
      url.searchParams.set("connectionGeneration", generation);
      url.searchParams.set("connectionAttempt", String(attempt));
    }
    return url.toString();
  }

  private open(url: string, log: FrameLog, recordClose: boolean): WebSocket {
    const headers: Record<string, string> = {};
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const socket = new WebSocket(url, { headers });
    socket.on("error", () => {});
    log.attach(socket);
    if (recordClose) socket.on("close", (code) => this.closeCodes.push(code));
    return socket;
  }

  /** Opens the sockets of the current mode (a new generation in paired mode). */
  async connect(): Promise<void> {
    if (this.mode === "single") {
      this.control = this.open(this.socketUrl(undefined), this.logs.control, true);
      this.stream = undefined;
      await waitForOpen(this.control);
      return;
    }
    if (this.mode === "split") {
      this.control = this.open(this.socketUrl("control"), this.logs.control, true);
      this.stream = this.open(this.socketUrl("stream"), this.logs.stream, false);
      await Promise.all([waitForOpen(this.control), waitForOpen(this.stream)]);
      return;
    }
    const generation = randomUUID();
    const attempt = ++this.generationAttempt;
    const isReady = (frame: JsonFrame): boolean =>
      frame.type === "listener_ready" && frame.connection_generation === generation && frame.connection_attempt === attempt;
    const controlFrom = this.logs.control.frames.length;
    this.control = this.open(this.socketUrl("control", generation, attempt), this.logs.control, true);
    await waitForOpen(this.control);
    await this.logs.control.waitFor(isReady, { from: controlFrom, what: "listener_ready on control" });
    const streamFrom = this.logs.stream.frames.length;
    this.stream = this.open(this.socketUrl("stream", generation, attempt), this.logs.stream, false);
    await waitForOpen(this.stream);
    await this.logs.stream.waitFor(isReady, { from: streamFrom, what: "listener_ready on stream" });
  }

  /** Sends a frame the way Letta Code does: stream-type frames on the stream socket when split. */
  sendControl(frame: JsonFrame): void {
    this.control?.send(JSON.stringify(frame));
  }

  sendStream(frame: JsonFrame): void {
    (this.stream ?? this.control)?.send(JSON.stringify(frame));
  }

  /** Closes both sockets from the listener's side. */
  closeSockets(code = 1000): void {
    this.stream?.close(code);
    this.control?.close(code);
  }

  terminate(): void {
    this.control?.terminate();
    this.stream?.terminate();
  }
}
