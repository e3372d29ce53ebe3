import { EventEmitter } from "eventemitter3";
import type { ManagedSandboxInfo } from "../backends/managed-sandbox.js";
import { DEFAULT_CALL_LIMITS } from "../calls/index.js";
import { ToolrelayError, asToolrelayError } from "../errors.js";
import type { LinkState, RuntimeLink } from "../transport/runtime-link.js";
import type { FrameEnvelope, InboundFrame } from "../wire/index.js";
import { ApprovalResponder } from "./approval-responder.js";
import { CloseDrain } from "./close-drain.js";
import { HeldRequestTracker } from "./held-request-tracker.js";
import { OwnRuntime } from "./own-runtime.js";
import { RuntimeRegistration } from "./runtime-registration.js";
import type { SessionEvents, SessionToolList } from "./session-events.js";
import type { MessageInput, SendOptions, SessionParts } from "./session-parts.js";
import { ToolCallDispatcher } from "./tool-call-dispatcher.js";
import type { Turn } from "./turn.js";
import { DEFAULT_TURN_GAP_MS, TurnStarter } from "./turn-starter.js";
import { TurnTracker } from "./turn-tracker.js";

export type { MessageInput, SendOptions, SessionParts } from "./session-parts.js";

/**
 * A session with one agent and conversation. Create it with `createSession`;
 * close it with `close()` or `await using`. `TTools`: its `tools`, which type the
 * `tool-call-end` event's and the turn result's outputs.
 */
export class Session<TTools extends SessionToolList = SessionToolList> extends EventEmitter<SessionEvents<TTools>> {
  #parts: SessionParts;
  #link: RuntimeLink;
  #tracker: HeldRequestTracker;
  #registration: RuntimeRegistration;
  #own: OwnRuntime;
  #dispatcher: ToolCallDispatcher;
  #approvals: ApprovalResponder;
  #turns: TurnTracker;
  #starter: TurnStarter;
  #closing: Promise<void> | undefined;
  #drain: CloseDrain;
  #callerSignalCleanup: (() => void) | undefined;
  /** Registered with the runtime (`start` resolved): from then on, an idle session lets the process exit. */
  #started = false;
  #turnActive = false;

  /** @internal Use `createSession`. */
  static create<TTools extends SessionToolList = SessionToolList>(parts: SessionParts): Session<TTools> {
    return new Session<TTools>(parts);
  }

  // biome-ignore lint/style/useConsistentMemberAccessibility: a constructor cannot be #private; createSession is the way in
  private constructor(parts: SessionParts) {
    super();
    this.#parts = parts;
    this.#link = parts.link;
    this.#tracker = new HeldRequestTracker(parts.link, parts.timers);
    this.#tracker.onChange(() => this.#updateHold());
    this.#registration = new RuntimeRegistration(this.#tracker, parts.startInput, () => parts.tools.wireGroups(), parts.requestTimeoutMs);
    const options = parts.options;
    this.#own = new OwnRuntime(parts.expectedRuntime);
    this.#drain = new CloseDrain(parts.timers);
    this.#dispatcher = new ToolCallDispatcher({
      link: parts.link,
      registry: () => parts.tools,
      own: this.#own,
      events: this as unknown as EventEmitter<SessionEvents>,
      timers: parts.timers,
      limits: parts.callLimits,
      observer: parts.observer,
      turn: () => this.#turns.activeMessageId ?? "",
      approve: (ask) => this.#approvals.approveClientCall(ask),
      journal: parts.options.journal,
      onOutput: (record, output) => {
        const turn = this.#turns.turn;
        if (turn !== undefined && record.turn !== "" && record.turn === this.#turns.activeMessageId) {
          turn.addToolOutput(record.toolCallId, record.toolName, output);
        }
      },
    });
    this.#approvals = new ApprovalResponder({
      isClientTool: (name) => parts.tools.get(name) !== undefined,
      canUseTool: options.canUseTool,
      own: this.#own,
      onForeign: (frame, scope) => {
        if (this.listenerCount("foreign-frame") === 0) return;
        this.emit("foreign-frame", {
          type: frame.type,
          requestId: frame.request_id,
          agentId: scope.agent_id,
          conversationId: scope.conversation_id,
        });
      },
      send: (frame) => this.#link.send(frame),
      request: (frame) =>
        this.#tracker.request(frame, { responseType: "input_accepted", timeoutMs: parts.requestTimeoutMs }) as Promise<{
          accepted: boolean;
          error?: string | undefined;
        }>,
      onLost: (request) => {
        const lost = new ToolrelayError(
          "TURN_FAILED",
          `the runtime lost its permission request for ${request.toolName} (it answered "Approval request is no longer pending" to the ` +
            "session's first answer), so the turn cannot go on. Letta Code 0.32.18 does this to a turn whose input came within its " +
            "cleanup window after the previous turn's end: raise turnGapMs (docs/approvals.md), then send again",
        );
        this.emit("error", lost);
        this.#turns.turn?.fail(lost);
      },
      timeoutMs: parts.callLimits.approvalTimeoutMs ?? DEFAULT_CALL_LIMITS.approvalTimeoutMs,
      timers: parts.timers,
      onCallbackError: (error) =>
        this.emit(
          "error",
          new ToolrelayError("CALLBACK_FAILED", "the canUseTool callback threw; the request was denied", { cause: error }),
        ),
    });
    this.#turns = new TurnTracker({
      timers: parts.timers,
      runtime: () => this.#own.scope,
      isClientTool: (name) => parts.tools.get(name) !== undefined,
      sentResponse: (toolCallId) => this.#dispatcher.sentResponse(toolCallId),
      pendingCalls: () => this.#dispatcher.table.runningCount,
      probe: (runtime) => this.#link.send({ type: "sync", runtime, recover_approvals: false, force_device_status: false }),
      onActiveChange: (active) => {
        this.#turnActive = active;
        this.#updateHold();
        this.#link.setTurnActive?.(active);
      },
      stallProbeMs: options.turnStallProbeMs ?? 5_000,
    });
    this.#starter = new TurnStarter({
      link: parts.link,
      timers: parts.timers,
      observer: parts.observer,
      requestTimeoutMs: parts.requestTimeoutMs,
      sandbox: parts.sandbox,
      requests: this.#tracker,
      registration: this.#registration,
      own: this.#own,
      turns: this.#turns,
      calls: this.#dispatcher.table,
      reassertToolsEachTurn: options.reassertToolsEachTurn ?? false,
      turnGapMs: options.mode === "unrestricted" ? 0 : (options.turnGapMs ?? DEFAULT_TURN_GAP_MS),
      onError: (error) => this.emit("error", error),
    });
    // The method itself (with its receiver), not a closure around it: one call less on every frame's way in.
    this.#link.on("frame", this.#onFrame, this);
    this.#link.on("state", (state, previous) => this.#onState(state, previous));
    this.#link.on("reconnected", () => void this.#onReconnected());
    this.#link.on("error", (error) => this.emit("error", error));
    this.#link.on("invalid-frame", (error, frame) => {
      this.emit("error", new ToolrelayError("INVALID_FRAME", `ignored an invalid frame from the runtime: ${error}`));
      // Every request gets an answer (else the runtime waits 5 min), even one the SDK cannot read.
      if (frame?.type === "external_tool_call_request" && frame.requestId !== undefined) {
        this.#link.send({
          type: "external_tool_call_response",
          request_id: frame.requestId,
          error: `Invalid external_tool_call_request: ${error}`,
        });
      }
    });
    // HOOK (tool sources): a source's changed tools are re-registered with the runtime.
    parts.tools.onChange(() => void this.#onToolsChanged());
    parts.tools.onError((error) => this.emit("error", error));
    const signal = options.signal;
    if (signal) {
      const onAbort = () => void this.close();
      signal.addEventListener("abort", onAbort);
      this.#callerSignalCleanup = () => signal.removeEventListener("abort", onAbort);
    }
  }

  /**
   * Emit without ever throwing into the SDK: a listener that throws is
   * reported as an `error` event (code LISTENER_FAILED) and the session goes on.
   */
  override emit(event: keyof SessionEvents, ...args: unknown[]): boolean {
    const emitUnsafe = super.emit.bind(this) as (name: keyof SessionEvents, ...rest: unknown[]) => boolean;
    if (event === "error") this.#parts.observer.error(args[0] as ToolrelayError);
    try {
      return emitUnsafe(event, ...args);
    } catch (error) {
      if (event !== "error") {
        try {
          emitUnsafe("error", new ToolrelayError("LISTENER_FAILED", `a "${event}" listener threw`, { cause: error }));
        } catch {
          // An error listener that throws is ignored: nothing may throw into the SDK.
        }
      }
      return true;
    }
  }

  /** The agent this session drives (known once `createSession` resolved). */
  get agentId(): string {
    return this.#own.scope?.agent_id ?? "";
  }

  /** The conversation this session drives. */
  get conversationId(): string {
    return this.#own.scope?.conversation_id ?? "";
  }

  /** The logical connection id (part of every tool call's identity). */
  get connectionId(): string {
    return this.#link.connectionId;
  }

  /** The link's state: `open`, `reconnecting`, `closed`, ... */
  get state(): LinkState {
    return this.#link.state;
  }

  /** The cloud backend's managed sandbox (`backend.sandbox`), once created; otherwise `undefined`. */
  get sandbox(): ManagedSandboxInfo | undefined {
    return this.#parts.sandbox?.info;
  }

  /** Tool calls currently running in this process. */
  get pendingToolCalls(): number {
    return this.#dispatcher.table.runningCount;
  }

  /** @internal Connect and register the runtime with every client tool. */
  async start(): Promise<void> {
    if (this.#parts.options.signal?.aborted) throw new ToolrelayError("ABORTED", "the session's signal was already aborted");
    await this.#link.connect();
    await this.#register();
    this.#started = true;
    this.#updateHold();
  }

  /**
   * Hold the event loop while something of the session is in flight (starting, a turn, a client
   * tool call, a request, closing); let the process exit while the session is idle, so that a
   * script that forgets `close()` still ends (docs/getting-started.md#6-close).
   */
  #updateHold(): void {
    const busy =
      !this.#started ||
      this.#closing !== undefined ||
      this.#turnActive ||
      this.#dispatcher.table.runningCount > 0 ||
      this.#tracker.pendingCount > 0;
    this.#parts.hold?.set(busy);
  }

  async #register(): Promise<void> {
    const runtime = await this.#registration.start(this.#own.scope);
    this.#own.scope = runtime;
    this.#parts.onRuntime?.(runtime);
  }

  /**
   * Send a user message and start a turn. Iterate the returned turn for its
   * events, or await `turn.result`. One turn at a time: sending while a turn
   * runs throws `TURN_IN_PROGRESS`. The message is written exactly once.
   */
  send(message: MessageInput, options: SendOptions = {}): Turn<TTools> {
    if (this.#closing) throw new ToolrelayError("ABORTED", "the session is closed");
    return this.#starter.start(message, options) as Turn<TTools>;
  }

  /** Abort the running turn, if any (see {@link Turn.abort}). */
  abort(): Promise<void> {
    return this.#starter.abort();
  }

  /** Close the session: pending tool calls are answered as cancelled, the link closes, and whatever the session started is stopped. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    this.#updateHold();
    return this.#closing;
  }

  /** `await using session = …`: {@link Session.close} when the block ends. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #close(): Promise<void> {
    this.#parts.observer.sessionClosed(this.#dispatcher.table.runningCount);
    this.#callerSignalCleanup?.();
    // Mid-turn, more tool call requests may be on their way (the next of a burst follows an answer by
    // a few ms): they are answered cancelled while the socket stays open a moment.
    const midTurn = this.#dispatcher.table.runningCount > 0 || this.#turns.turn !== undefined;
    this.#dispatcher.table.close("the session was closed");
    this.#starter.close(new ToolrelayError("ABORTED", "the session was closed"));
    this.#turns.stop();
    this.#tracker.rejectAll(new ToolrelayError("ABORTED", "the session was closed"));
    if (midTurn) await this.#drain.quiet(() => this.#link.state === "open");
    await this.#link.close();
    await this.#parts.dispose();
  }

  #onFrame(frame: InboundFrame, envelope: FrameEnvelope | undefined): void {
    this.#route(frame, envelope);
    // A call started (a request) or ended (the runtime answers a response with frames of its own).
    this.#updateHold();
  }

  #route(frame: InboundFrame, envelope: FrameEnvelope | undefined): void {
    switch (frame.type) {
      case "external_tool_call_request":
        this.#drain.requestArrived();
        this.#turns.onActivity(frame.runtime);
        this.#dispatcher.handle(frame);
        return;
      case "control_request":
        this.#approvals.handle(frame);
        return;
      case "stream_delta":
        this.#turns.onDelta(frame);
        return;
      case "update_loop_status":
        this.#turns.onLoopStatus(frame, envelope?.event_seq);
        return;
      case "turn_finished":
        this.#turns.onTurnFinished(frame, envelope?.event_seq);
        return;
      default:
        this.#tracker.handle(frame);
    }
  }

  #onState(state: LinkState, previous: LinkState): void {
    this.#parts.observer.linkState(state, previous);
    this.emit("connection-state-change", { state, previous });
    if (state === "reconnecting" && previous === "open") this.#dispatcher.table.epochEnded();
    // A call can arrive and settle before the link first reports open (the relay offers a session
    // its runtime's unanswered calls as soon as it binds): its held answer goes out now.
    if (state === "open" && previous === "connecting") this.#dispatcher.table.linkOpened();
    if (state === "closed" && !this.#closing) this.#dispatcher.table.close("the link to the runtime was closed");
    const runtimeKeepsState = this.#link.keepsPendingCallsAcrossReconnect && state === "reconnecting";
    if ((state === "reconnecting" || state === "closed") && !runtimeKeepsState) {
      // Local: the app-server forgets a dropped connection's requests and cancels its turn.
      // Cloud: the listener keeps both across a relay drop, so requests keep their deadlines.
      const lost = new ToolrelayError("CONNECTION_CLOSED", "the link to the runtime was lost during the turn");
      this.#starter.linkLost(lost);
      this.#tracker.rejectAll(new ToolrelayError("CONNECTION_CLOSED", "the link to the runtime was lost"));
    }
  }

  /** HOOK (tool sources): send the new tool set; without a runtime or an open link, the next runtime_start carries it. */
  async #onToolsChanged(): Promise<void> {
    const runtime = this.#own.scope;
    if (this.#closing || runtime === undefined || this.#link.state !== "open") return;
    try {
      await this.#registration.reassertTools(runtime);
      this.emit("tools-change", { names: this.#parts.tools.names() });
    } catch (error) {
      this.emit("error", asToolrelayError(error));
    }
  }

  async #onReconnected(): Promise<void> {
    if (this.#closing) return;
    // First, synchronously: the new epoch. A request can arrive on the new socket right behind the
    // re-registration answer; it must be answered, not held with the old socket's responses.
    const keeps = this.#link.keepsPendingCallsAcrossReconnect;
    this.#dispatcher.table.epochStarted(this.#link.epoch, keeps);
    try {
      await this.#register();
      const runtime = this.#own.scope;
      // The runtime kept the turn, but frames sent while the link was down may be lost: its end too.
      if (keeps) this.#turns.framesMayBeLost();
      if (keeps && runtime) this.#link.send({ type: "sync", runtime, recover_approvals: true, force_device_status: true });
      this.#starter.writeUnwrittenInput();
    } catch (error) {
      this.emit("error", asToolrelayError(error));
    }
  }
}
