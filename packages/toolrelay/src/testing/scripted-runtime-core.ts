/**
 * The heart of the scripted runtime: connections, per-runtime conversations,
 * event fan-out to subscribers, turns and their queue, approvals, abort, and
 * the per-connection cleanup of docs/protocol.md#disconnects. Frame parsing lives in
 * `scripted-commands.ts`, one turn's run in `scripted-turn-run.ts`, the socket server in
 * `scripted-runtime.ts`.
 */
import { randomUUID } from "node:crypto";
import type { WebSocket } from "ws";
import type { Timers } from "../internal/timers.js";
import { ScriptedCallTable } from "./scripted-call-table.js";
import { ScriptedConnection } from "./scripted-connection.js";
import { ScriptedConversation, type ActiveTurn, type InputItem } from "./scripted-conversation.js";
import {
  deviceStatusFrame,
  lifecycleDelta,
  loopStatusFrame,
  queueFrame,
  streamDelta,
  subagentStateFrame,
  type LoopStatus,
} from "./scripted-frames.js";
import { ScriptedRuntimeState, runtimeKey } from "./scripted-runtime-state.js";
import { createTurnHost } from "./scripted-turn-host.js";
import { startScriptedTurn } from "./scripted-turn-run.js";
import type { ScriptedFrameRecord, ScriptedPermissionMode, ScriptedRuntimeScope, TurnScript } from "./scripted-runtime-types.js";

export interface CoreOptions {
  script: TurnScript;
  permissionMode: ScriptedPermissionMode;
  externalToolTimeoutMs: number;
  /** `missedAborts` of the options. */
  missedAborts: number;
  /** `staleLoopStatusWindowMs` of the options. */
  staleLoopStatusWindowMs: number;
  version: string;
  timers: Timers;
}

export class ScriptedRuntimeCore {
  readonly state = new ScriptedRuntimeState();
  readonly calls: ScriptedCallTable;
  readonly connections = new Map<string, ScriptedConnection>();
  readonly frames: ScriptedFrameRecord[] = [];
  readonly sentFrames: ScriptedFrameRecord[] = [];
  /** What scripts threw (assertions, bugs) — not `turn.fail()`. */
  readonly scriptErrors: unknown[] = [];
  closed = false;
  readonly #conversations = new Map<string, ScriptedConversation>();
  readonly #turnsInFlight = new Set<Promise<void>>();
  #connectionCounter = 0;
  #runCounter = 0;
  #messageCounter = 0;
  #queueCounter = 0;
  #batchCounter = 0;

  readonly options: CoreOptions;

  /** `abort_message`s of a running turn still to be answered `aborted: false`. */
  #missedAborts: number;

  constructor(options: CoreOptions) {
    this.options = options;
    this.#missedAborts = options.missedAborts;
    this.calls = new ScriptedCallTable(options.externalToolTimeoutMs, options.timers);
  }

  conversation(scope: ScriptedRuntimeScope): ScriptedConversation {
    const key = runtimeKey(scope);
    let conversation = this.#conversations.get(key);
    if (!conversation) {
      conversation = new ScriptedConversation(
        { agent_id: scope.agent_id, conversation_id: scope.conversation_id },
        this.options.permissionMode,
      );
      this.#conversations.set(key, conversation);
    }
    return conversation;
  }

  /** A new socket: `app-server-<n>` (from 0, like the real server); pending approvals are replayed to it. */
  addConnection(socket: WebSocket): ScriptedConnection {
    const connection = new ScriptedConnection(`app-server-${this.#connectionCounter++}`, socket, this.options.timers, (record) =>
      this.sentFrames.push(record),
    );
    this.connections.set(connection.id, connection);
    for (const conversation of this.#conversations.values()) {
      for (const frame of conversation.pendingControlRequests()) connection.sendEvent(frame, conversation.scope);
    }
    return connection;
  }

  /** docs/protocol.md#disconnects: hand over or cancel driven turns, drop queued inputs, reject calls, forget registrations. */
  removeConnection(connectionId: string): void {
    if (!this.connections.delete(connectionId)) return;
    for (const conversation of this.#conversations.values()) {
      const before = conversation.queue.length;
      const kept = conversation.queue.filter((item) => item.connectionId !== connectionId);
      if (kept.length !== before) {
        conversation.queue.splice(0, conversation.queue.length, ...kept);
        this.emit(conversation.scope, queueFrame(conversation.queue));
      }
      const active = conversation.active;
      if (active && active.connectionId === connectionId) {
        const heir = this.#openSubscribers(conversation.scope).find((id) => id !== connectionId);
        if (heir) active.connectionId = heir;
        else conversation.cancelTurn();
      }
    }
    this.calls.rejectConnection(connectionId, "Listener connection closed");
    this.state.forgetConnection(connectionId);
  }

  /** Emit a runtime event to every open subscriber of `scope`. */
  emit(scope: ScriptedRuntimeScope, message: Record<string, unknown>): void {
    for (const id of this.#openSubscribers(scope)) this.connections.get(id)?.sendEvent(message, scope);
  }

  setLoop(
    conversation: ScriptedConversation,
    status: LoopStatus,
    activeRunIds: readonly string[],
    executing: readonly string[] = [],
  ): void {
    conversation.status = status;
    conversation.activeRunIds = [...activeRunIds];
    conversation.executingToolCallIds = [...executing];
    this.emit(conversation.scope, loopStatusFrame(conversation.loopSnapshot()));
  }

  deviceStatus(conversation: ScriptedConversation): Record<string, unknown> {
    return deviceStatusFrame({
      isProcessing: conversation.isRunning,
      permissionMode: conversation.permissionMode,
      pendingControlRequests: conversation.pendingControlRequests(),
    });
  }

  /** The replay of `runtime_start` / `sync` (to one connection): approvals, device, loop, queue, subagents. */
  replayState(connection: ScriptedConnection, conversation: ScriptedConversation, forceDeviceStatus: boolean): void {
    for (const frame of conversation.pendingControlRequests()) connection.sendEvent(frame, conversation.scope);
    if (forceDeviceStatus) connection.sendEvent(this.deviceStatus(conversation), conversation.scope);
    connection.sendEvent(loopStatusFrame(conversation.loopSnapshot()), conversation.scope);
    connection.sendEvent(queueFrame(conversation.queue), conversation.scope);
    connection.sendEvent(subagentStateFrame([...conversation.subagents.values()]), conversation.scope);
  }

  /**
   * Accept a `create_message` input: start a turn when idle, else queue it.
   * `acknowledge` is called with the disposition before any turn frame is written.
   */
  acceptInput(
    conversation: ScriptedConversation,
    input: InputItem,
    content: unknown,
    acknowledge: (disposition: "started" | "queued") => void,
  ): void {
    const [clientMessageId] = input.clientMessageIds;
    if (!conversation.active && conversation.queue.length === 0) {
      const active = this.#reserveTurn(conversation, input);
      acknowledge("started");
      this.#startTurn(conversation, active, input, `batch-direct-${randomUUID()}`, undefined);
      return;
    }
    const queued = {
      ...input,
      id: `q-${++this.#queueCounter}`,
      clientMessageId: clientMessageId ?? `cm-submit-${randomUUID()}`,
      content,
      enqueuedAt: this.timestamp(),
    };
    conversation.queue.push(queued);
    conversation.paused = false;
    acknowledge("queued");
    this.emit(conversation.scope, queueFrame(conversation.queue));
    this.#pump(conversation);
  }

  /** `abort_message`: true when a running turn or a pending approval was interrupted. */
  abort(conversation: ScriptedConversation, runId: string | undefined): boolean {
    const running = conversation.isRunning ? conversation.active : undefined;
    if (runId && runId !== running?.session?.lastRunId) return false;
    if (!running && conversation.approvals.size === 0) return false;
    if (running && this.#missedAborts > 0) {
      this.#missedAborts--;
      return false;
    }
    const interruptedRunId = running?.session?.lastRunId;
    conversation.cancelTurn();
    conversation.paused = conversation.queue.length > 0;
    if (running) {
      this.setLoop(conversation, "WAITING_ON_INPUT", []);
      this.emit(conversation.scope, this.deviceStatus(conversation));
      this.emit(conversation.scope, streamDelta(lifecycleDelta("status", interruptedRunId, { message: "Interrupted", level: "warning" })));
    }
    return true;
  }

  async flush(): Promise<void> {
    await Promise.all([...this.connections.values()].map((connection) => connection.flushed()));
  }

  /** Stop: cancel turns and approvals, reject pending calls, terminate sockets. */
  shutdown(): void {
    this.closed = true;
    for (const conversation of this.#conversations.values()) conversation.cancelTurn();
    this.calls.rejectAll("Listener runtime stopped");
    for (const connection of this.connections.values()) connection.terminate();
    this.connections.clear();
    this.state.clear();
  }

  /** Resolves when every turn that is running now has finished (bounded by the caller). */
  async turnsSettled(): Promise<void> {
    await Promise.allSettled([...this.#turnsInFlight]);
  }

  /** A fresh `local-run-<n>`, remembered with the client message ids it answers. */
  nextRunId(conversation: ScriptedConversation, clientMessageIds: readonly string[]): string {
    const runId = `local-run-${++this.#runCounter}`;
    conversation.clientMessageIdsByRunId.set(runId, [...clientMessageIds]);
    return runId;
  }

  /** The runtime's wall clock as an ISO timestamp (from the injected timers). */
  timestamp(): string {
    return new Date(this.options.timers.now()).toISOString();
  }

  /** A fresh `<prefix>-<n>` message id (one counter per runtime). */
  nextMessageId(prefix: string): string {
    return `${prefix}-${++this.#messageCounter}`;
  }

  #openSubscribers(scope: ScriptedRuntimeScope): string[] {
    return this.state.subscribers(scope).filter((id) => this.connections.get(id)?.isOpen === true);
  }

  #pump(conversation: ScriptedConversation): void {
    if (this.closed || conversation.active || conversation.paused) return;
    const next = conversation.queue.shift();
    if (!next) return;
    const active = this.#reserveTurn(conversation, next);
    this.emit(conversation.scope, queueFrame(conversation.queue, [next.clientMessageId]));
    this.#startTurn(conversation, active, next, `batch-${++this.#batchCounter}`, next);
  }

  #reserveTurn(conversation: ScriptedConversation, input: InputItem): ActiveTurn {
    const active: ActiveTurn = { controller: new AbortController(), connectionId: input.connectionId };
    conversation.active = active;
    return active;
  }

  #startTurn(
    conversation: ScriptedConversation,
    active: ActiveTurn,
    input: InputItem,
    turnId: string,
    dequeued: { clientMessageId: string; content: unknown } | undefined,
  ): void {
    const scopeIds = input.payload.external_tool_scope_ids as string[] | undefined;
    const allowlist = input.payload.client_tool_allowlist as string[] | undefined;
    const tools = this.state.visibleTools({
      runtime: conversation.scope,
      originConnectionId: input.connectionId,
      ...(scopeIds ? { scopeIds } : {}),
      ...(allowlist ? { allowlist } : {}),
    });
    const sinceLastEnd =
      conversation.lastTurnFinishedAt === undefined
        ? Number.POSITIVE_INFINITY
        : this.options.timers.now() - conversation.lastTurnFinishedAt;
    conversation.reportsStaleStatus = sinceLastEnd <= this.options.staleLoopStatusWindowMs;
    const running = startScriptedTurn(createTurnHost(this, conversation, active), {
      conversation,
      active,
      input,
      turnId,
      dequeued,
      tools,
      script: this.options.script,
      onScriptError: (error) => {
        this.scriptErrors.push(error);
      },
      onIdle: () => this.#pump(conversation),
    });
    this.#turnsInFlight.add(running);
    void running.finally(() => this.#turnsInFlight.delete(running));
  }
}
