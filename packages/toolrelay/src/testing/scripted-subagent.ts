/**
 * A subagent's stream, as Letta Code 0.32.18 sends it (recorded:
 * test/fixtures/real-peer/unkind/subagent-during-turn.json): the runtime's
 * `Agent` tool runs the subagent as its own headless process and forwards
 * every message of it as a `stream_delta` **on the parent's runtime scope**
 * with `subagent_id` set — its text, its tool calls and returns, its own
 * `stop_reason`s (`requires_approval` before a tool, `end_turn` at the end) —
 * and lists it in `update_subagent_state`. A subagent never sends an
 * external tool request: client tools are the parent runtime's.
 */
import { randomUUID } from "node:crypto";
import { streamDelta, ZERO_USAGE } from "./scripted-frames.js";
import type { TurnHost } from "./scripted-turn-host.js";
import type { ScriptedRuntimeScope, ScriptedSubagent, ScriptedSubagentOptions } from "./scripted-runtime-types.js";

type Frame = Record<string, unknown>;

export interface SubagentStart extends ScriptedSubagentOptions {
  subagentId: string;
  parent: ScriptedRuntimeScope;
  signal: AbortSignal;
}

export class ScriptedSubagentStream implements ScriptedSubagent {
  readonly subagentId: string;
  /** The subagent's own agent (its messages carry it). */
  readonly agentId = `agent-local-${randomUUID()}`;
  #runCounter = 0;
  #messageCounter = 1;
  #seqId = 0;
  #runId: string | undefined;
  #finished = false;
  readonly #toolCalls: Array<{ id: string; name: string; args: string }> = [];
  readonly #startedAt: number;
  readonly #host: TurnHost;
  readonly #start: SubagentStart;

  constructor(host: TurnHost, start: SubagentStart) {
    this.#host = host;
    this.#start = start;
    this.#startedAt = host.now();
    this.subagentId = start.subagentId;
    this.#state("running");
  }

  async say(text: string): Promise<void> {
    this.#message("assistant_message", `ui-msg-${++this.#messageCounter}`, { content: [{ type: "text", text }] });
    await this.#host.flush();
  }

  async reason(text: string): Promise<void> {
    this.#message("reasoning_message", `letta-msg-${++this.#messageCounter}`, { reasoning: text });
    await this.#host.flush();
  }

  async runTool(
    name: string,
    args: Record<string, unknown>,
    output: string,
    options: { status?: "success" | "error" | undefined; toolCallId?: string | undefined } = {},
  ): Promise<void> {
    if (this.#stopped) return;
    const toolCallId = options.toolCallId ?? `call_${randomUUID().slice(0, 8)}`;
    const argumentsText = JSON.stringify(args);
    this.#endStep("requires_approval");
    this.#toolCalls.push({ id: toolCallId, name, args: argumentsText });
    this.#emit({
      ...this.#envelope(`tool-call-${toolCallId}`),
      message_type: "tool_call_message",
      tool_call: { name, tool_call_id: toolCallId, arguments: argumentsText },
    });
    this.#state("running");
    this.#emit({
      ...this.#envelope(`tool-return-${toolCallId}`),
      message_type: "tool_return_message",
      status: options.status ?? "success",
      tool_call_id: toolCallId,
      tool_return: output,
    });
    await this.#host.flush();
  }

  async finish(): Promise<void> {
    if (this.#stopped) return;
    this.#endStep("end_turn");
    this.#finished = true;
    this.#state("completed");
    await this.#host.flush();
  }

  get #stopped(): boolean {
    return this.#finished || this.#start.signal.aborted;
  }

  #message(messageType: string, id: string, fields: Frame): void {
    if (this.#stopped) return;
    if (this.#runId === undefined) {
      this.#runId = `local-run-${++this.#runCounter}`;
      this.#seqId = 0;
    }
    this.#emit({
      type: "message",
      id,
      date: this.#timestamp(),
      agent_id: this.agentId,
      conversation_id: "default",
      message_type: messageType,
      ...fields,
      run_id: this.#runId,
      seq_id: ++this.#seqId,
      session_id: this.agentId,
      uuid: id,
      timestamp: this.#timestamp(),
    });
  }

  /** Usage, then the subagent's own stop_reason (never the parent's). */
  #endStep(stopReason: string): void {
    if (this.#runId === undefined) return;
    this.#message("usage_statistics", `letta-msg-${++this.#messageCounter}`, { ...ZERO_USAGE });
    this.#emit({
      type: "message",
      message_type: "stop_reason",
      stop_reason: stopReason,
      run_id: this.#runId,
      seq_id: ++this.#seqId,
      session_id: this.agentId,
      uuid: randomUUID(),
      timestamp: this.#timestamp(),
    });
    this.#runId = undefined;
  }

  #envelope(id: string): Frame {
    const date = this.#timestamp();
    return { type: "message", id, date, session_id: this.agentId, uuid: id, timestamp: date };
  }

  #timestamp(): string {
    return new Date(this.#host.now()).toISOString();
  }

  #emit(delta: Frame): void {
    this.#host.emit({ ...streamDelta(delta), subagent_id: this.subagentId });
  }

  /** `update_subagent_state` with this subagent's entry (the runtime lists every subagent of the runtime). */
  #state(status: "running" | "completed"): void {
    this.#host.setSubagent({
      subagent_id: this.subagentId,
      subagent_type: this.#start.subagentType ?? "General-purpose",
      description: this.#start.description ?? "subagent",
      prompt: this.#start.prompt ?? "",
      status,
      agent_url: this.agentId,
      conversation_id: "default",
      model: "scripted/model",
      is_background: true,
      tool_call_id: this.#start.toolCallId ?? null,
      parent_agent_id: this.#start.parent.agent_id,
      parent_conversation_id: this.#start.parent.conversation_id,
      start_time: this.#startedAt,
      tool_calls: [...this.#toolCalls],
      total_tokens: 0,
      duration_ms: status === "completed" ? this.#host.now() - this.#startedAt : 0,
    });
  }
}
