/**
 * One thread: a chat client's conversation, held as one toolrelay session (one Letta
 * conversation) across the HTTP requests that continue it. A request either starts a turn (a new
 * user message), or continues the turn that is waiting for the client's tool results; the
 * response streams the agent's text and ends when the turn ends (`finish_reason: "stop"`) or when
 * the runtime waits for a client tool (`"tool_calls"`: the turn stays open, its calls pending,
 * until the next request brings their results). See docs/openai-bridge.md.
 */
import { ToolCallAbortError } from "../tools/index.js";
import { createSession } from "../session/create-session.js";
import type { MessageInput, Session } from "../session/session.js";
import type { AgentOptions, BackendOptions } from "../session/session-options.js";
import type { Turn } from "../session/turn.js";
import type { ToolCallContext } from "../tools/index.js";
import { ChatApiError, describeError } from "./chat-api-error.js";
import type { ChatMessage, ChatRequest, ChatTool } from "./chat-request.js";
import { ClientCalls } from "./client-calls.js";
import { ClientToolSet } from "./client-tool-set.js";
import { finishReasonOf, type CompletionSink } from "./completion-writer.js";
import { planRequest, type RequestPlan } from "./request-plan.js";
import { RequestSlot } from "./request-slot.js";
import type { RequestTail } from "./request-tail.js";
import type { ResolvedBridgeOptions } from "./resolve-bridge-options.js";
import { ThreadInbox } from "./thread-inbox.js";
import { EMPTY_TRANSCRIPT, type TranscriptFingerprints } from "./transcript-fingerprint.js";
import { normalizeToolName } from "./tool-names.js";
import { updateSessionTools } from "./tool-set-update.js";
import { TurnStop } from "./turn-stop.js";

export interface ChatThreadOptions {
  id: string;
  /** The API key's principal; the thread is found for its requests only. */
  principal: string;
  bridge: ResolvedBridgeOptions;
  /** The backend to pass to createSession (a spawned local server already replaced by its url). */
  backend: BackendOptions;
  agent: AgentOptions;
  /** The first request's tools (registered with the session's runtime_start). */
  tools: readonly ChatTool[];
}

export class ChatThread {
  readonly id: string;
  readonly principal: string;
  #options: ChatThreadOptions;
  #session: Session | undefined;
  #tools: ClientToolSet;
  #calls = new ClientCalls();
  #turn: Turn | undefined;
  #inbox: ThreadInbox | undefined;
  #transcript = EMPTY_TRANSCRIPT;
  #systemForwarded: string | undefined;
  #slot: RequestSlot;
  #stop: TurnStop;
  #lastUsedAt: number;

  // biome-ignore lint/style/useConsistentMemberAccessibility: a constructor cannot be #private; open() is the way in
  private constructor(options: ChatThreadOptions) {
    this.id = options.id;
    this.principal = options.principal;
    this.#options = options;
    this.#lastUsedAt = options.bridge.timers.now();
    this.#slot = new RequestSlot(options.id, options.bridge.timers);
    this.#stop = new TurnStop(options.bridge.timers);
    this.#tools = new ClientToolSet((call) => this.#execute(call), options.bridge.toolResultTimeoutMs);
    this.#tools.update(this.#offered(options.tools));
  }

  /** Start a thread: a session with a new conversation. Throws a 400 for tools that cannot be offered, a 502 when the session cannot start. */
  static async open(options: ChatThreadOptions): Promise<ChatThread> {
    const thread = new ChatThread(options);
    const { bridge } = options;
    const workspace = bridge.workspace === "runtime" ? undefined : bridge.workspace;
    try {
      thread.#session = await createSession({
        ...bridge.session,
        backend: options.backend,
        agent: options.agent,
        conversation: "new",
        tools: bridge.toolExecution === "client" ? [thread.#tools.source()] : [],
        ...(workspace === undefined ? {} : { workspace }),
      });
    } catch (error) {
      throw ChatApiError.upstream(`cannot start a conversation with the agent: ${describeError(error)}`, error);
    }
    thread.#session.on("error", (error) => bridge.onError(error, { threadId: thread.id }));
    return thread;
  }

  get agentId(): string {
    return this.#session?.agentId ?? "";
  }

  get conversationId(): string {
    return this.#session?.conversationId ?? "";
  }

  /** The fingerprint of what the thread was sent and answered so far. */
  get transcript(): string {
    return this.#transcript;
  }

  /** A request is being answered. */
  get busy(): boolean {
    return this.#slot.busy;
  }

  /**
   * Tool calls were returned to the client and the turn waits for their results — or, with no
   * request attached, the turn is still ending (being stopped): true until it has.
   */
  get waitingForTools(): boolean {
    return this.#turn !== undefined && !this.#turn.done && !this.#slot.busy;
  }

  /** The thread is stopping a turn (its client went away, or a call timed out): the next request waits for the end. */
  get stopping(): boolean {
    return this.#stop.active;
  }

  /** Resolves `true` once no request is being answered, `false` after a short grace (then a request gets its 409). */
  whenFree(): Promise<boolean> {
    return this.#slot.whenFree();
  }

  /** The session's link is gone for good: the thread cannot answer any more. */
  get broken(): boolean {
    return this.#session === undefined || this.#session.state === "closed";
  }

  get lastUsedAt(): number {
    return this.#lastUsedAt;
  }

  /**
   * Answer one request. Everything that makes the request wrong is thrown (as a
   * {@link ChatApiError}) before `createSink` is called; after it, failures go to the sink.
   * Resolves with the new transcript fingerprint, or `undefined` when the answer did not complete.
   */
  async serve(
    request: ChatRequest,
    fingerprints: TranscriptFingerprints,
    tail: RequestTail,
    createSink: () => CompletionSink,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    this.#slot.take();
    try {
      const plan = await this.#prepare(request, fingerprints, tail);
      const sink = createSink();
      const produced = await this.#run(plan, sink, signal);
      if (produced === undefined) return undefined;
      this.#transcript = fingerprints.extendedBy(produced);
      return this.#transcript;
    } finally {
      this.#lastUsedAt = this.#options.bridge.timers.now();
      this.#slot.release();
    }
  }

  /** Close the session (pending calls are answered as cancelled). Never rejects. */
  async close(): Promise<void> {
    await this.#session?.close().catch(() => undefined);
  }

  async #prepare(request: ChatRequest, fingerprints: TranscriptFingerprints, tail: RequestTail): Promise<RequestPlan> {
    await this.#stop.settled();
    const { timers, session } = this.#options.bridge;
    await updateSessionTools(this.#session!, this.#tools, this.#offered(request.toolChoice === "none" ? [] : request.tools), {
      timers,
      timeoutMs: session.requestTimeoutMs ?? 30_000,
    });
    return planRequest(
      {
        turnRunning: this.#turn !== undefined && !this.#turn.done,
        calls: this.#calls,
        toolNames: this.#tools.declared.map((tool) => tool.name),
        systemForwarded: this.#systemForwarded,
        bridge: this.#options.bridge,
      },
      fingerprints,
      tail,
    );
  }

  /**
   * Stream the answer; returns the assistant message it produced, or `undefined` if it did not
   * complete. When the client goes away (`signal`) the turn is stopped and this returns at once:
   * the thread is free, and its next request waits for the stop ({@link TurnStop.settled}), not a 409.
   */
  async #run(plan: RequestPlan, sink: CompletionSink, signal: AbortSignal): Promise<ChatMessage | undefined> {
    const onAbort = () => void this.#stopTurn();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      if (plan.stopFirst) await this.#stopTurn();
      // Gone before its turn started (or continued): stop what runs, start nothing.
      if (signal.aborted) {
        onAbort();
        return undefined;
      }
      let queued = plan.continuing ? plan.input : undefined;
      if (!plan.continuing && !this.#start(plan.input!, plan.system, sink)) return undefined;
      for (;;) {
        if (signal.aborted || sink.closed || this.#inbox === undefined) return undefined;
        const outcome = await this.#inbox.readTurn(sink, signal);
        if (outcome.kind === "left") return undefined;
        if (outcome.kind === "tool_calls") {
          sink.finish("tool_calls", outcome.calls);
          return {
            role: "assistant",
            text: sink.content,
            toolCalls: outcome.calls.map((call) => ({ ...call, name: normalizeToolName(call.name) })),
          };
        }
        if (outcome.kind === "failed") {
          sink.fail(ChatApiError.upstream(`the agent's turn failed: ${outcome.error.message}`, outcome.error));
          return undefined;
        }
        if (queued !== undefined && outcome.result.stopReason !== "cancelled" && outcome.result.stopReason !== "error") {
          const next = queued;
          queued = undefined;
          if (!this.#start(next, plan.system, sink)) return undefined;
          continue;
        }
        const { stopReason, error } = outcome.result;
        if (stopReason === "error" || (error !== undefined && sink.content === "")) {
          sink.fail(ChatApiError.upstream(`the agent's turn ended with an error: ${error ?? "no message"}`));
          return undefined;
        }
        if (stopReason === "cancelled") {
          sink.fail(ChatApiError.upstream("the agent's turn was cancelled"));
          return undefined;
        }
        sink.finish(finishReasonOf(stopReason), []);
        return { role: "assistant", text: sink.content, toolCalls: [] };
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** Start a turn with `input`. A failure to start goes to the sink (and `false` is returned). */
  #start(input: MessageInput, system: string | undefined, sink: CompletionSink): boolean {
    this.#calls.clear();
    try {
      const turn = this.#session!.send(input);
      this.#turn = turn;
      this.#inbox = ThreadInbox.of(turn, this.#calls, this.#tools);
      this.#systemForwarded = system;
      return true;
    } catch (error) {
      this.#inbox = undefined;
      sink.fail(ChatApiError.upstream(`cannot send the message to the agent: ${describeError(error)}`, error));
      return false;
    }
  }

  /** A client tool call: wait for the client's result (delivered by a later request). */
  async #execute({ tool, input, context }: { tool: ChatTool; input: unknown; context: ToolCallContext }): Promise<string> {
    const { result, waiting, id } = this.#calls.request(context.toolCallId, tool, input);
    if (!waiting) return result;
    const onAbort = () => {
      const reason: unknown = context.signal.reason;
      this.#calls.abandon(id, ToolCallAbortError.is(reason) && reason.kind === "timeout" ? "timeout" : "cancelled");
      // Nobody is attached: the runtime was answered (timed out); stop the turn so the next request starts cleanly.
      if (!this.#slot.busy) void this.#stopTurn(context.toolCallId);
    };
    context.signal.addEventListener("abort", onAbort, { once: true });
    this.#inbox?.wakeForCalls();
    try {
      return await result;
    } finally {
      context.signal.removeEventListener("abort", onAbort);
    }
  }

  /** Abort the running turn and wait for its end (see {@link TurnStop.stop}). Never rejects. */
  #stopTurn(answeredCallId?: string): Promise<void> {
    return this.#stop.stop(this.#turn, this.#inbox, answeredCallId);
  }

  /** The tools this bridge offers for a request's declared ones. */
  #offered(tools: readonly ChatTool[]): readonly ChatTool[] {
    return this.#options.bridge.toolExecution === "client" ? tools : [];
  }
}
