/**
 * A protocol-level listener for the relay cluster's load runs (`cluster-load.ts`): it speaks to the
 * relay exactly as the real Letta Code listener does (docs/protocol.md "The listener behind the
 * relay"), only with many tool calls at once, which one real listener cannot produce (it asks one
 * call per model response). Registration with the Bearer key (429 / 5xx retried, another 4xx
 * fatal), split + paired sockets (control, `listener_ready`, stream, `listener_ready`), pongs for
 * pings and its own pings (three missed pongs: terminate), and on a drop or an ordinary close a
 * reconnect AT ONCE to the same `wsUrl`, then with backoff (here 100 ms, 200, 400 … 2 s; the real one
 * 1 s … 30 s). Close 1008: its runtime stops (pending calls rejected) and it registers again; 1000
 * "Replaced by new connection": it exits.
 *
 * Each `external_tool_call_request` is written ONCE on control and never again: one written into
 * a socket that dies is lost, as with the runtime; one that comes due while the sockets are away
 * waits for them. Every `external_tool_call_response` is recorded per request id (the real
 * listener takes the first and ignores the rest; a second one here is "written twice").
 */
import { randomUUID } from "node:crypto";
import { WebSocket } from "ws";
import { parseJsonObject } from "./json-object-text.js";

/** Opens one socket of the first connection; the load harness wraps it to see which node the balancer picked. */
export type OpenThrough = <T>(role: string, open: () => Promise<T>) => Promise<T>;

export interface LoadListenerOptions {
  /** The balancer's origin, `http://127.0.0.1:<port>`. */
  baseUrl: string;
  apiKey: string;
  connectionName: string;
  /** Default: a fresh `load-device-<uuid>` (a new environment). */
  deviceId?: string;
  /** How long to wait for each `listener_ready` before trying a new generation. Default 10 s. */
  handshakeTimeoutMs?: number;
  /** JSON ping interval on each socket (the real listener's is 30 s). Default 30 s. */
  pingIntervalMs?: number;
  /** Wraps each socket of the first connection (opened one after another then). */
  openThrough?: OpenThrough;
}

/** One call the listener asked, and what came back for it. */
export interface ListenerRequest {
  readonly requestId: string;
  readonly toolCallId: string;
  readonly agentId: string;
  readonly conversationId: string;
  readonly input: Record<string, unknown>;
  /** When `send` was called. */
  readonly dueAt: number;
  /** When it was written to a control socket (once). */
  writtenAt: number | undefined;
  /** Every answer received for it: `error` set when it was an error answer (the relay's own, e.g. no owner). */
  readonly responses: Array<{ at: number; error: string | undefined; text: string | undefined }>;
  /** The runtime stopped (1008, replaced) before an answer: the runtime rejected it. */
  rejectedAt: number | undefined;
}

interface Generation {
  control: WebSocket;
  stream: WebSocket | undefined;
  ready: boolean;
  lost: boolean;
  missedPongs: Map<WebSocket, number>;
  pingTimer: NodeJS.Timeout | undefined;
}

interface RegisterAnswer {
  connectionId: string;
  wsUrl: string;
}

const MAX_BACKOFF_MS = 2_000;

export class LoadListener {
  readonly deviceId: string;
  readonly requests = new Map<string, ListenerRequest>();
  connectionId = "";
  /** Socket pairs that became ready (the first connection included). */
  connections = 0;
  registrations = 0;
  /** Close codes of lost connections, in order. */
  readonly closeCodes: number[] = [];
  /** When each connection after the first became ready. */
  readonly reconnectedAt: number[] = [];
  /** Answers for request ids this listener never asked. */
  unknownResponses = 0;
  /** It exited (1000 "Replaced by new connection"). */
  exited = false;
  #options: LoadListenerOptions;
  #wsUrl = "";
  #generation: Generation | undefined;
  #attempt = 0;
  #queue: ListenerRequest[] = [];
  #failures = 0;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #mustRegister = false;
  #stopped = false;
  /** Frames that arrived on a socket before its pair watched it, and where a watched socket's frames go. */
  #early = new WeakMap<WebSocket, unknown[]>();
  #sinks = new WeakMap<WebSocket, (data: unknown) => void>();

  private constructor(options: LoadListenerOptions) {
    this.#options = options;
    this.deviceId = options.deviceId ?? `load-device-${randomUUID()}`;
  }

  /** Registers and connects; resolves once the first socket pair is ready. */
  static async start(options: LoadListenerOptions): Promise<LoadListener> {
    const listener = new LoadListener(options);
    await listener.#register();
    const outcome = await listener.#connect(options.openThrough);
    if (outcome !== "ready") {
      listener.stop();
      throw new Error(`load listener: the first connection failed (${outcome})`);
    }
    return listener;
  }

  /** Whether both sockets are ready now. */
  get ready(): boolean {
    return this.#generation?.ready === true && !this.#generation.lost;
  }

  /** Asks one call: written now if the sockets are ready, else when they are (never twice). */
  send(call: { requestId: string; toolCallId: string; agentId: string; conversationId: string; input: Record<string, unknown> }): void {
    const request: ListenerRequest = { ...call, dueAt: Date.now(), writtenAt: undefined, responses: [], rejectedAt: undefined };
    this.requests.set(call.requestId, request);
    this.#queue.push(request);
    this.#flush();
  }

  /** Closes the sockets (1000) and stops reconnecting. */
  stop(): void {
    this.#stopped = true;
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
    const generation = this.#generation;
    if (!generation) return;
    generation.lost = true;
    if (generation.pingTimer) clearInterval(generation.pingTimer);
    for (const socket of [generation.control, generation.stream]) {
      if (socket && socket.readyState === WebSocket.OPEN) socket.close(1000, "listener stopping");
      else socket?.terminate();
    }
  }

  async #register(): Promise<void> {
    for (let failures = 0; ; failures++) {
      if (this.#stopped) return;
      let status = 0;
      let body: Partial<RegisterAnswer> | undefined;
      try {
        const response = await fetch(`${this.#options.baseUrl}/v1/environments/register`, {
          method: "POST",
          headers: { authorization: `Bearer ${this.#options.apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({
            deviceId: this.deviceId,
            listenerInstanceId: "load-listener",
            connectionName: this.#options.connectionName,
            metadata: {},
          }),
        });
        status = response.status;
        body = status === 200 ? ((await response.json()) as Partial<RegisterAnswer>) : undefined;
        if (status !== 200) await response.body?.cancel();
      } catch {
        status = 0; // the balancer or a node went away mid-request: retried like a 5xx
      }
      if (status === 200 && typeof body?.connectionId === "string" && typeof body.wsUrl === "string") {
        this.connectionId = body.connectionId;
        this.#wsUrl = body.wsUrl;
        this.registrations++;
        return;
      }
      if (status !== 0 && status !== 429 && status < 500) throw new Error(`load listener: register answered HTTP ${status}`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_BACKOFF_MS, 100 * 2 ** failures)));
    }
  }

  #socketUrl(channel: "control" | "stream", generation: string, attempt: number): string {
    const url = new URL(this.#wsUrl);
    url.searchParams.set("deviceId", this.deviceId);
    url.searchParams.set("connectionName", this.#options.connectionName);
    url.searchParams.set("channel", channel);
    url.searchParams.set("connectionGeneration", generation);
    url.searchParams.set("connectionAttempt", String(attempt));
    return url.toString();
  }

  /** One paired connection: control, its `listener_ready`, stream, its `listener_ready`. */
  async #connect(openThrough?: OpenThrough): Promise<"ready" | "failed"> {
    const generationId = randomUUID();
    const attempt = ++this.#attempt;
    const through: OpenThrough = openThrough ?? ((_role, open) => open());
    const headers = { authorization: `Bearer ${this.#options.apiKey}` };
    const timeoutMs = this.#options.handshakeTimeoutMs ?? 10_000;
    const openReady = (channel: "control" | "stream") =>
      through(`listener-${channel}`, () => {
        const socket = new WebSocket(this.#socketUrl(channel, generationId, attempt), { headers });
        socket.on("error", () => {});
        // Read from the first byte on: what follows `listener_ready` before the pair is watched waits in `early`.
        const early: unknown[] = [];
        this.#early.set(socket, early);
        let handshaking = true;
        socket.on("message", (data) => {
          const sink = this.#sinks.get(socket);
          if (sink) sink(data);
          else if (handshaking) onHandshake(data);
          else early.push(data);
        });
        let onHandshake = (_data: unknown) => {};
        return new Promise<WebSocket | undefined>((resolve) => {
          const timer = setTimeout(() => finish(false), timeoutMs);
          onHandshake = (data: unknown) => {
            const frame = parseJsonObject(data);
            if (frame?.type === "listener_ready" && frame.connection_generation === generationId && frame.connection_attempt === attempt)
              finish(true);
          };
          const finish = (ok: boolean) => {
            clearTimeout(timer);
            handshaking = false;
            socket.off("close", onClose);
            if (!ok) socket.terminate();
            resolve(ok ? socket : undefined);
          };
          const onClose = (code: number, reason: Buffer) => {
            this.#noteClose(code, reason.toString());
            finish(false);
          };
          socket.once("close", onClose);
        });
      });
    const control = await openReady("control");
    if (!control) return "failed";
    const generation: Generation = { control, stream: undefined, ready: false, lost: false, missedPongs: new Map(), pingTimer: undefined };
    this.#generation = generation;
    this.#watch(generation, control);
    const stream = await openReady("stream");
    if (!stream || generation.lost || this.#stopped) {
      stream?.terminate();
      this.#lose(generation, undefined);
      return "failed";
    }
    generation.stream = stream;
    this.#watch(generation, stream);
    generation.ready = true;
    this.connections++;
    if (this.connections > 1) this.reconnectedAt.push(Date.now());
    this.#failures = 0;
    generation.pingTimer = setInterval(() => this.#ping(generation), this.#options.pingIntervalMs ?? 30_000);
    generation.pingTimer.unref();
    this.#flush();
    return "ready";
  }

  /** A socket of `generation`: its frames handled, its close ends the whole pair. */
  #watch(generation: Generation, socket: WebSocket): void {
    generation.missedPongs.set(socket, 0);
    const sink = (data: unknown) => this.#onFrame(generation, socket, parseJsonObject(data));
    this.#sinks.set(socket, sink);
    for (const data of this.#early.get(socket)?.splice(0) ?? []) sink(data);
    this.#early.delete(socket);
    socket.once("close", (code, reason) => this.#lose(generation, { code, reason: reason.toString() }));
  }

  #onFrame(generation: Generation, socket: WebSocket, frame: Record<string, unknown> | undefined): void {
    if (!frame) return;
    switch (frame.type) {
      case "ping":
        if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "pong" }));
        return;
      case "pong":
        generation.missedPongs.set(socket, 0);
        return;
      case "external_tool_call_response": {
        // Commands are read only from control, as the real listener does.
        if (socket !== generation.control) return;
        const request = typeof frame.request_id === "string" ? this.requests.get(frame.request_id) : undefined;
        if (!request) {
          this.unknownResponses++;
          return;
        }
        const result = frame.result as { content?: Array<{ text?: unknown }> } | undefined;
        const text = typeof result?.content?.[0]?.text === "string" ? result.content[0].text : undefined;
        request.responses.push({ at: Date.now(), error: typeof frame.error === "string" ? frame.error : undefined, text });
        return;
      }
      case "runtime_start": {
        if (socket !== generation.control) return;
        const agentId = typeof frame.agent_id === "string" ? frame.agent_id : undefined;
        const conversationId = typeof frame.conversation_id === "string" ? frame.conversation_id : undefined;
        const ok = agentId !== undefined && conversationId !== undefined;
        const runtime = ok ? { agent_id: agentId, conversation_id: conversationId } : null;
        socket.send(
          JSON.stringify({
            type: "runtime_start_response",
            request_id: frame.request_id,
            success: ok,
            runtime,
            agent: ok ? { id: agentId } : null,
            conversation: ok ? { id: conversationId } : null,
            ...(ok ? {} : { error: "runtime_start requires exactly one of agent_id or create_agent" }),
          }),
        );
        return;
      }
      default:
        return; // the real listener ignores what it does not know
    }
  }

  #ping(generation: Generation): void {
    for (const socket of [generation.control, generation.stream]) {
      if (!socket || socket.readyState !== WebSocket.OPEN) continue;
      const missed = (generation.missedPongs.get(socket) ?? 0) + 1;
      generation.missedPongs.set(socket, missed);
      if (missed > 3) {
        socket.terminate();
        continue;
      }
      socket.send(JSON.stringify({ type: "ping" }));
    }
  }

  /** A socket closed with `code`: 1008 means register again, "Replaced by new connection" means exit; both stop the runtime. */
  #noteClose(code: number, reason: string): void {
    if (this.#stopped) return;
    this.closeCodes.push(code);
    if (code === 1008) this.#mustRegister = true;
    if (code === 1000 && reason === "Replaced by new connection") this.exited = true;
    if (code === 1008 || this.exited) {
      // A terminal close stops the runtime: every pending call is rejected (docs/protocol.md#disconnects).
      for (const request of this.requests.values()) if (request.responses.length === 0) request.rejectedAt ??= Date.now();
    }
  }

  /** A socket of the pair closed (`close`: its code, not yet noted): both go, and a reconnect follows. */
  #lose(generation: Generation, close: { code: number; reason: string } | undefined): void {
    if (generation.lost) return;
    generation.lost = true;
    if (generation.pingTimer) clearInterval(generation.pingTimer);
    generation.control.terminate();
    generation.stream?.terminate();
    if (this.#stopped) return;
    if (close) this.#noteClose(close.code, close.reason);
    if (this.exited) return;
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#stopped || this.#reconnectTimer) return;
    const delay = this.#failures === 0 ? 0 : Math.min(MAX_BACKOFF_MS, 100 * 2 ** (this.#failures - 1));
    this.#failures++;
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      void this.#reconnect();
    }, delay);
  }

  async #reconnect(): Promise<void> {
    if (this.#stopped) return;
    if (this.#mustRegister) {
      this.#mustRegister = false;
      await this.#register().catch(() => {
        this.#mustRegister = true;
      });
    }
    const outcome = this.#mustRegister ? "failed" : await this.#connect();
    if (outcome !== "ready" && !this.exited) this.#scheduleReconnect();
  }

  /** Writes every waiting request on the ready control socket, in order. */
  #flush(): void {
    const generation = this.#generation;
    if (!generation?.ready || generation.lost || generation.control.readyState !== WebSocket.OPEN) return;
    for (const request of this.#queue.splice(0)) {
      if (request.rejectedAt !== undefined) continue;
      request.writtenAt = Date.now();
      generation.control.send(
        JSON.stringify({
          type: "external_tool_call_request",
          request_id: request.requestId,
          runtime: { agent_id: request.agentId, conversation_id: request.conversationId },
          tool_call_id: request.toolCallId,
          tool_name: "echo",
          input: request.input,
        }),
      );
    }
  }
}
