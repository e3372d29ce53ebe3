/**
 * A protocol-level SDK client for the relay cluster's load runs (`cluster-load.ts`): one runtime's
 * two status sockets (`channel=control|stream&agentId&conversationId`, Bearer key) through the
 * balancer, doing on the wire what the SDK's cloud link does (docs/protocol.md "Cloud delivery
 * rules", docs/settlement.md "Epochs"): every `seq` acked on the socket it came on, JSON pings
 * every second with a 3 s pong watchdog, both sockets closed when either closes, a reconnect with
 * jittered backoff 50 ms → 500 ms, `runtime_start` (with its one tool) at connect and after every
 * reconnect, answers written while the sockets were away held and written on the next epoch, and
 * answers written within 30 s before a loss written again (a write into a dying socket never
 * arrives).
 *
 * Executing a delivered call = waiting a random 20–200 ms, then answering
 * `{"type":"external_tool_call_response","request_id":…,"result":{"content":[{"type":"text",…}]}}`.
 * `dedupe: true` is the SDK's rule — a tool call it runs or ran is joined or answered again from
 * its result, never run twice; `dedupe: false` is the control: every delivery runs.
 */
import { WebSocket } from "ws";
import type { OpenThrough } from "./load-listener.js";
import { parseJsonObject } from "./json-object-text.js";

export interface LoadSdkClientOptions {
  /** The balancer's WebSocket origin, `ws://127.0.0.1:<port>`. */
  wsBase: string;
  connectionId: string;
  apiKey: string;
  agentId: string;
  conversationId: string;
  dedupe: boolean;
  /** Random source in [0, 1) (seeded by the harness). */
  random: () => number;
  /** Wraps each socket of the first connection (opened one after another then). */
  openThrough?: OpenThrough;
}

/** What this client knows of one request id. */
interface Delivery {
  readonly toolCallId: string;
  /** When it was first delivered. */
  readonly firstAt: number;
  /** How often the relay delivered it. */
  deliveries: number;
  /** The epoch its answer was last written on, and when. */
  answeredEpoch: number | undefined;
  answeredAt: number;
  /** The answer waits for the sockets. */
  held: boolean;
}

/** One tool call (by tool call id) under the SDK's rule. */
interface ToolCall {
  running: boolean;
  result: string | undefined;
  /** Request ids waiting for its answer. */
  waiting: Set<string>;
}

const PING_INTERVAL_MS = 1_000;
const PONG_TIMEOUT_MS = 3_000;
const RESEND_WINDOW_MS = 30_000;
const BACKOFF = { initialMs: 50, maxMs: 500 };

export class LoadSdkClient {
  readonly agentId: string;
  readonly conversationId: string;
  /** Executions per request id. */
  readonly executions = new Map<string, number>();
  readonly deliveries = new Map<string, Delivery>();
  /** HTTP statuses of refused upgrades (a 404 or 403 is a G6 failure). */
  readonly refusals = new Map<number, number>();
  /** When each connection was lost. */
  readonly lostAt: number[] = [];
  /** When each epoch opened (index = epoch). */
  readonly openedAt: number[] = [0];
  /** Arrival of every sequenced frame: [time, epoch]. */
  readonly frames: Array<[number, number]> = [];
  /** `seq` numbers skipped within a session (a frame the relay never delivered). */
  seqGaps = 0;
  epoch = 0;
  #options: LoadSdkClientOptions;
  #control: WebSocket | undefined;
  #stream: WebSocket | undefined;
  #open = false;
  #calls = new Map<string, ToolCall>();
  /** Frames that arrived on a socket before its connection was complete, and where a socket's frames go once it is. */
  #early = new WeakMap<WebSocket, unknown[]>();
  #sinks = new WeakMap<WebSocket, (data: unknown) => void>();
  #lastSeq = { control: 0, stream: 0 };
  #firstOnEpoch = { control: false, stream: false };
  #attempt = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #pingTimer: NodeJS.Timeout | undefined;
  #lastPongAt = 0;
  #stopped = false;
  #startCount = 0;
  /** Called once when a connection is complete (the first one, while `start` waits for it). */
  #onOpen: (() => void) | undefined;

  private constructor(options: LoadSdkClientOptions) {
    this.#options = options;
    this.agentId = options.agentId;
    this.conversationId = options.conversationId;
  }

  /** Connects (retrying like the SDK) and resolves once both sockets are open. */
  static async start(options: LoadSdkClientOptions): Promise<LoadSdkClient> {
    const client = new LoadSdkClient(options);
    if (await client.#connect(options.openThrough)) return client;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        client.stop();
        reject(new Error(`load client ${options.conversationId}: not connected within 30 s`));
      }, 30_000);
      client.#onOpen = () => {
        clearTimeout(timer);
        resolve();
      };
      client.#scheduleReconnect();
    });
    return client;
  }

  get connected(): boolean {
    return this.#open;
  }

  /** Cuts the TCP connection of both sockets (no close frame): a forced reconnect. */
  cut(): void {
    this.#control?.terminate();
    this.#stream?.terminate();
  }

  /** The first sequenced frame after `at` on a connection opened after `at`: its delay from `at`, if any. */
  firstFrameAfter(at: number): number | undefined {
    for (const [time, epoch] of this.frames) if (time > at && (this.openedAt[epoch] ?? 0) > at) return time - at;
    return undefined;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    if (this.#pingTimer) clearInterval(this.#pingTimer);
    for (const socket of [this.#control, this.#stream]) {
      if (socket?.readyState === WebSocket.OPEN) socket.close(1000, "client stopping");
      else socket?.terminate();
    }
  }

  #url(channel: "control" | "stream"): string {
    const { wsBase, connectionId, agentId, conversationId } = this.#options;
    const url = new URL(`${wsBase}/v1/environments/${encodeURIComponent(connectionId)}/status/ws`);
    url.searchParams.set("channel", channel);
    url.searchParams.set("agentId", agentId);
    url.searchParams.set("conversationId", conversationId);
    return url.toString();
  }

  /**
   * Opens one socket. Its frames are read from the first byte on: those that arrive before the
   * connection is complete (the relay redelivers at once on attach) wait in `early` until then.
   */
  #openSocket(channel: "control" | "stream"): Promise<WebSocket | undefined> {
    const socket = new WebSocket(this.#url(channel), { headers: { authorization: `Bearer ${this.#options.apiKey}` } });
    const early: unknown[] = [];
    this.#early.set(socket, early);
    socket.on("message", (data) => {
      const sink = this.#sinks.get(socket);
      if (sink) sink(data);
      else early.push(data);
    });
    return new Promise((resolve) => {
      socket.on("error", () => resolve(undefined));
      socket.once("close", () => resolve(undefined));
      socket.once("unexpected-response", (request, response) => {
        const status = response.statusCode ?? 0;
        this.refusals.set(status, (this.refusals.get(status) ?? 0) + 1);
        request.destroy();
        resolve(undefined);
      });
      socket.once("open", () => resolve(socket));
    });
  }

  /** Opens both sockets (at once; one after another with `openThrough`); true when both are open. */
  async #connect(openThrough?: OpenThrough): Promise<boolean> {
    let control: WebSocket | undefined;
    let stream: WebSocket | undefined;
    if (openThrough) {
      control = await openThrough(`sdk-control ${this.conversationId}`, () => this.#openSocket("control"));
      stream = control ? await openThrough(`sdk-stream ${this.conversationId}`, () => this.#openSocket("stream")) : undefined;
    } else {
      [control, stream] = await Promise.all([this.#openSocket("control"), this.#openSocket("stream")]);
    }
    if (!control || !stream || control.readyState !== WebSocket.OPEN || stream.readyState !== WebSocket.OPEN || this.#stopped) {
      control?.terminate();
      stream?.terminate();
      return false;
    }
    this.#control = control;
    this.#stream = stream;
    this.#open = true;
    this.#attempt = 0;
    this.epoch++;
    this.openedAt[this.epoch] = Date.now();
    this.#firstOnEpoch = { control: true, stream: true };
    this.#lastPongAt = Date.now();
    const epoch = this.epoch;
    for (const socket of [control, stream]) socket.once("close", () => this.#lose(epoch));
    this.#pingTimer = setInterval(() => this.#ping(epoch), PING_INTERVAL_MS);
    this.#pingTimer.unref();
    this.#onOpen?.();
    this.#onOpen = undefined;
    this.#startRuntime(control);
    this.#writeAfterReconnect();
    for (const [channel, socket] of [
      ["control", control],
      ["stream", stream],
    ] as const) {
      const sink = (data: unknown) => this.#onFrame(channel, socket, parseJsonObject(data), epoch);
      this.#sinks.set(socket, sink);
      for (const data of this.#early.get(socket)?.splice(0) ?? []) sink(data);
      this.#early.delete(socket);
    }
    return true;
  }

  #startRuntime(control: WebSocket): void {
    control.send(
      JSON.stringify({
        type: "runtime_start",
        request_id: `load-start-${this.conversationId}-${++this.#startCount}`,
        agent_id: this.agentId,
        conversation_id: this.conversationId,
        recover_approvals: false,
        force_device_status: true,
        client_info: { name: "toolrelay-load" },
        external_tools: [
          {
            tools: [
              { name: "echo", description: "Echoes its input.", parameters: { type: "object", properties: { n: { type: "number" } } } },
            ],
          },
        ],
      }),
    );
  }

  #onFrame(channel: "control" | "stream", socket: WebSocket, frame: Record<string, unknown> | undefined, epoch: number): void {
    if (!frame || epoch !== this.epoch) return;
    if (frame.type === "pong") {
      this.#lastPongAt = Date.now();
      return;
    }
    const seq = frame.seq;
    if (typeof seq === "number") {
      socket.send(JSON.stringify({ type: "ack", seq }));
      this.frames.push([Date.now(), epoch]);
      this.#countSeq(channel, seq);
    }
    if (channel === "control" && frame.type === "external_tool_call_request") this.#onCall(frame);
  }

  /** Numbering continues in a resumed session (redeliveries repeat old numbers) and restarts at 1 in a new one. */
  #countSeq(channel: "control" | "stream", seq: number): void {
    const first = this.#firstOnEpoch[channel];
    this.#firstOnEpoch[channel] = false;
    const last = this.#lastSeq[channel];
    if (first && seq === 1) {
      this.#lastSeq[channel] = 1;
      return;
    }
    if (seq > last + 1) this.seqGaps += seq - last - 1;
    if (seq > last) this.#lastSeq[channel] = seq;
  }

  #onCall(frame: Record<string, unknown>): void {
    const requestId = frame.request_id;
    const toolCallId = frame.tool_call_id;
    if (typeof requestId !== "string" || typeof toolCallId !== "string") return;
    let delivery = this.deliveries.get(requestId);
    if (!delivery) {
      delivery = { toolCallId, firstAt: Date.now(), deliveries: 0, answeredEpoch: undefined, answeredAt: 0, held: false };
      this.deliveries.set(requestId, delivery);
    }
    delivery.deliveries++;
    if (!this.#options.dedupe) {
      this.#run(requestId, () => this.#answer(requestId));
      return;
    }
    const call = this.#calls.get(toolCallId);
    if (!call) {
      const started: ToolCall = { running: true, result: undefined, waiting: new Set([requestId]) };
      this.#calls.set(toolCallId, started);
      this.#run(requestId, () => {
        started.running = false;
        started.result = `echo ${toolCallId}`;
        for (const waiting of started.waiting) this.#answer(waiting);
        started.waiting.clear();
      });
      return;
    }
    if (call.running) {
      call.waiting.add(requestId); // joined: no second run
      return;
    }
    if (delivery.answeredEpoch === this.epoch) return; // already answered on this epoch: nothing is written
    this.#answer(requestId); // resent from the result
  }

  /** One execution for `requestId`: `done` after 20–200 ms. */
  #run(requestId: string, done: () => void): void {
    this.executions.set(requestId, (this.executions.get(requestId) ?? 0) + 1);
    const delay = 20 + this.#options.random() * 180;
    setTimeout(done, delay);
  }

  #answer(requestId: string): void {
    const delivery = this.deliveries.get(requestId);
    if (!delivery) return;
    const control = this.#control;
    if (!this.#open || !control || control.readyState !== WebSocket.OPEN) {
      delivery.held = true;
      return;
    }
    delivery.held = false;
    delivery.answeredEpoch = this.epoch;
    delivery.answeredAt = Date.now();
    control.send(
      JSON.stringify({
        type: "external_tool_call_response",
        request_id: requestId,
        result: { content: [{ type: "text", text: `echo ${delivery.toolCallId}` }] },
      }),
    );
  }

  /** A new epoch: held answers go out, and answers written shortly before the loss go out again. */
  #writeAfterReconnect(): void {
    const lostAt = this.lostAt.at(-1);
    if (lostAt === undefined) return;
    for (const [requestId, delivery] of this.deliveries) {
      const recent =
        delivery.answeredEpoch !== undefined && delivery.answeredEpoch < this.epoch && delivery.answeredAt >= lostAt - RESEND_WINDOW_MS;
      if (delivery.held || recent) this.#answer(requestId);
    }
  }

  #ping(epoch: number): void {
    if (epoch !== this.epoch || !this.#open) return;
    if (Date.now() - this.#lastPongAt > PONG_TIMEOUT_MS) {
      this.cut(); // a missed pong means terminate
      return;
    }
    for (const socket of [this.#control, this.#stream]) if (socket?.readyState === WebSocket.OPEN) socket.send('{"type":"ping"}');
  }

  #lose(epoch: number): void {
    if (epoch !== this.epoch || !this.#open) return;
    this.#open = false;
    this.lostAt.push(Date.now());
    if (this.#pingTimer) clearInterval(this.#pingTimer);
    // The two sockets are one connection: if either closes, both are closed.
    this.#control?.terminate();
    this.#stream?.terminate();
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#stopped || this.#retryTimer) return;
    const attempt = this.#attempt++;
    const random = this.#options.random;
    const delay =
      attempt === 0
        ? BACKOFF.initialMs * (0.5 + random() / 2)
        : Math.max(BACKOFF.initialMs / 2, Math.min(BACKOFF.maxMs, BACKOFF.initialMs * 2 ** attempt) * random());
    this.#retryTimer = setTimeout(async () => {
      this.#retryTimer = undefined;
      if (this.#stopped) return;
      if (!(await this.#connect())) this.#scheduleReconnect();
    }, delay);
  }
}
