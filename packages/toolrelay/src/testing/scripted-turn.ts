/**
 * One turn of the scripted runtime: the API a script drives (`say`, `reason`,
 * `callTool(s)`, `runBuiltinTool`, `resendToolCall`, `subagent`, `fail`),
 * emitting the frames the real runtime emits for the same model output, in
 * the same order (recorded from Letta Code 0.32.18): every model step gets its
 * own `run_id`; a tool call ends the step with `stop_reason:
 * requires_approval`, then approval classification, `control_request` (for the
 * calls the mode does not run unasked: scripted-auto-approval.ts), executing status, `client_tool_start`, the external request
 * (or, for a runtime tool, streamed output snapshots), `client_tool_end` and
 * `tool_return_message`.
 */
import { randomUUID } from "node:crypto";
import {
  controlRequestFrame,
  lifecycleDelta,
  messageDelta,
  stopReasonDelta,
  streamDelta,
  toolReturnDelta,
  usageDelta,
} from "./scripted-frames.js";
import { runsUnasked, type ProposedToolKind } from "./scripted-auto-approval.js";
import { runRuntimeTool, type RuntimeToolOptions } from "./scripted-runtime-tool.js";
import { ScriptedSubagentStream } from "./scripted-subagent.js";
import { plainFailure } from "./scripted-tool-result.js";
import {
  INTERRUPTED_BY_USER,
  ScriptedTurnFailure,
  lastUserText,
  type Decision,
  type Proposal,
  type TurnStart,
} from "./scripted-turn-start.js";
import type { ApprovalAnswer } from "./scripted-conversation.js";
import type { TurnHost } from "./scripted-turn-host.js";
import type {
  ScriptedRuntimeScope,
  ScriptedSubagent,
  ScriptedSubagentOptions,
  ScriptedToolCallSpec,
  ScriptedToolResult,
  ScriptedTurn,
  ScriptedVisibleTool,
} from "./scripted-runtime-types.js";

interface MadeCall {
  name: string;
  input: Record<string, unknown>;
}

export class ScriptedTurnSession implements ScriptedTurn {
  readonly runtime: ScriptedRuntimeScope;
  readonly turnId: string;
  readonly messages: readonly unknown[];
  readonly payload: Readonly<Record<string, unknown>>;
  readonly tools: readonly ScriptedVisibleTool[];
  readonly signal: AbortSignal;
  readonly userText: string;
  #currentRunId: string | undefined;
  #seqId = 0;
  #stepOpen = false;
  readonly #madeCalls = new Map<string, MadeCall>();
  #subagentCounter = 0;
  readonly #start: TurnStart;
  /** @internal */
  readonly host: TurnHost;

  constructor(host: TurnHost, start: TurnStart) {
    this.host = host;
    this.#start = start;
    this.runtime = start.scope;
    this.turnId = start.turnId;
    this.messages = start.messages;
    this.payload = start.payload;
    this.tools = start.tools;
    this.signal = start.signal;
    this.userText = lastUserText(start.messages);
  }

  get connectionId(): string {
    return this.host.drivingConnectionId();
  }

  get runId(): string {
    return this.#currentRunId ?? "";
  }

  /** The run id of the latest step (undefined before the first one). */
  get lastRunId(): string | undefined {
    return this.#currentRunId;
  }

  fail(message: string): never {
    throw new ScriptedTurnFailure(message);
  }

  async say(text: string): Promise<void> {
    if (this.signal.aborted) return;
    this.ensureStep();
    this.#emitMessage("assistant_message", this.host.nextMessageId("ui-msg"), { content: [{ type: "text", text }] });
    await this.host.flush();
  }

  async reason(text: string): Promise<void> {
    if (this.signal.aborted) return;
    this.ensureStep();
    this.#emitMessage("reasoning_message", this.host.nextMessageId("letta-msg"), { reasoning: text });
    await this.host.flush();
  }

  async callTool(
    name: string,
    input: Record<string, unknown> = {},
    options: { toolCallId?: string | undefined } = {},
  ): Promise<ScriptedToolResult> {
    const [result] = await this.callTools([
      { name, input, ...(options.toolCallId !== undefined ? { toolCallId: options.toolCallId } : {}) },
    ]);
    return result!;
  }

  async callTools(calls: readonly ScriptedToolCallSpec[]): Promise<ScriptedToolResult[]> {
    if (calls.length === 0) return [];
    if (this.signal.aborted) return calls.map(() => plainFailure(INTERRUPTED_BY_USER));
    const specs = calls.map((call) => ({
      toolCallId: call.toolCallId ?? `call-${randomUUID()}`,
      name: call.name,
      input: call.input ?? {},
    }));
    const proposal = await this.propose(specs, "client");
    if (!proposal) return calls.map(() => plainFailure(INTERRUPTED_BY_USER));
    return this.#execute(proposal.decisions, proposal.runId);
  }

  /**
   * @internal The model proposes tool calls: an `approval_request_message` each, the step ends
   * with `requires_approval`, approval classification (scripted-auto-approval.ts: which calls
   * run unasked in the conversation's mode), then one `control_request` after another for the
   * rest. `undefined` when the turn was cancelled meanwhile.
   */
  async propose(specs: Decision["spec"][], kind: ProposedToolKind): Promise<Proposal | undefined> {
    this.ensureStep();
    const runId = this.runId;
    const decisions: Decision[] = specs.map((spec) => {
      const messageId = this.host.nextMessageId("letta-msg");
      this.#emitMessage("approval_request_message", messageId, {
        tool_call: { tool_call_id: spec.toolCallId, name: spec.name, arguments: JSON.stringify(spec.input) },
      });
      return { spec, messageId, approved: true };
    });
    this.endStep("requires_approval");
    const mode = this.host.permissionMode();
    const asked = decisions.filter((decision) => !runsUnasked(mode, kind, decision.spec.name, decision.spec.input));
    this.emitDelta(
      lifecycleDelta("approval_classification_end", runId, {
        auto_allowed_tool_call_ids: decisions.filter((decision) => !asked.includes(decision)).map((decision) => decision.spec.toolCallId),
        auto_denied_tool_call_ids: [],
        user_input_tool_call_ids: asked.map((decision) => decision.spec.toolCallId),
      }),
    );
    for (const decision of asked) {
      const answer = await this.#askApproval(decision);
      if (answer.kind === "cancelled") return undefined;
      if (answer.kind === "deny") {
        decision.approved = false;
        decision.denial = answer.message;
      } else if (answer.updatedInput) decision.spec.input = answer.updatedInput;
    }
    return { decisions, runId };
  }

  async redeliverToolCall(toolCallId: string): Promise<ScriptedToolResult> {
    const redelivered = this.host.redeliverExternal(toolCallId);
    if (!redelivered) throw new Error(`redeliverToolCall: no request with tool_call_id ${toolCallId} on an open connection`);
    return redelivered;
  }

  async resendToolCall(toolCallId: string): Promise<ScriptedToolResult> {
    const made = this.#madeCalls.get(toolCallId);
    if (!made) throw new Error(`resendToolCall: no earlier call with tool_call_id ${toolCallId} in this turn`);
    const tool = this.tools.find((candidate) => candidate.name === made.name);
    if (!tool) return this.#notFound(made.name);
    return this.host.callExternal(tool, toolCallId, made.input);
  }

  async runBuiltinTool(
    name: string,
    args: Record<string, unknown>,
    output: string,
    options: RuntimeToolOptions = {},
  ): Promise<ScriptedToolResult> {
    if (this.signal.aborted) return plainFailure(INTERRUPTED_BY_USER);
    return runRuntimeTool(this, { toolCallId: options.toolCallId ?? `call-${randomUUID()}`, name, input: args }, output, options);
  }

  subagent(options: ScriptedSubagentOptions = {}): ScriptedSubagent {
    const subagentId = options.subagentId ?? `subagent-${this.host.now()}-${++this.#subagentCounter}`;
    return new ScriptedSubagentStream(this.host, { ...options, subagentId, parent: this.runtime, signal: this.signal });
  }

  /** Starts a model step if none is open: four loop statuses, then a fresh `run_id`. */
  ensureStep(): void {
    if (this.#stepOpen) return;
    this.host.setLoop("SENDING_API_REQUEST", this.#currentRunId ? [this.#currentRunId] : []);
    this.host.setLoop("WAITING_FOR_API_RESPONSE", this.#currentRunId ? [this.#currentRunId] : []);
    this.host.setLoop("PROCESSING_API_RESPONSE", []);
    this.#currentRunId = this.host.nextRunId(this.#start.clientMessageIds);
    this.#seqId = 0;
    this.#stepOpen = true;
    this.host.setLoop("PROCESSING_API_RESPONSE", [this.#currentRunId]);
  }

  /** Ends the open step: usage statistics (unless `withUsage: false`), then the `stop_reason` delta. */
  endStep(stopReason: string, options: { withUsage?: boolean | undefined } = {}): void {
    if (!this.#stepOpen || !this.#currentRunId) return;
    if (options.withUsage !== false) {
      this.emitDelta(usageDelta(this.host.nextMessageId("letta-msg"), this.runtime, this.#currentRunId, ++this.#seqId));
    }
    this.emitDelta(stopReasonDelta(stopReason, this.#currentRunId, ++this.#seqId));
    this.#stepOpen = false;
  }

  /** A step-level `error_message` delta (for a script that threw). */
  emitErrorMessage(message: string): void {
    if (!this.#currentRunId) return;
    this.#emitMessage("error_message", this.host.nextMessageId("letta-msg"), {
      message,
      detail: message,
      error_type: "internal_error",
      retryable: false,
    });
  }

  async #askApproval(decision: Decision): Promise<ApprovalAnswer> {
    this.host.setLoop("WAITING_ON_APPROVAL", [this.runId]);
    const frame = controlRequestFrame(this.runtime, decision.spec.toolCallId, decision.spec.name, decision.spec.input);
    return this.host.requestApproval(frame);
  }

  async #execute(decisions: Decision[], runId: string): Promise<ScriptedToolResult[]> {
    const approved = decisions.filter((decision) => decision.approved);
    this.host.setLoop(
      "EXECUTING_CLIENT_SIDE_TOOL",
      [runId],
      approved.map((decision) => decision.spec.toolCallId),
    );
    this.host.emitDeviceStatus();
    for (const decision of approved) {
      this.emitDelta(
        lifecycleDelta(
          "client_tool_start",
          runId,
          { tool_call_id: decision.spec.toolCallId, tool_name: decision.spec.name, tool_args: JSON.stringify(decision.spec.input) },
          decision.messageId,
        ),
      );
    }
    await this.host.flush();
    const results: ScriptedToolResult[] = [];
    for (const decision of decisions) {
      if (!decision.approved) {
        // A denied call gets the denial message as its tool return, and no request.
        results.push(plainFailure(decision.denial ?? "Denied"));
        continue;
      }
      const { toolCallId, name, input } = decision.spec;
      this.#madeCalls.set(toolCallId, { name, input });
      if (this.signal.aborted) {
        results.push(plainFailure(INTERRUPTED_BY_USER));
        continue;
      }
      const tool = this.tools.find((candidate) => candidate.name === name);
      results.push(tool ? await this.host.callExternal(tool, toolCallId, input) : this.#notFound(name));
    }
    decisions.forEach((decision, index) => {
      const status = results[index]!.isError ? "error" : "success";
      this.emitDelta(lifecycleDelta("client_tool_end", runId, { tool_call_id: decision.spec.toolCallId, status }, decision.messageId));
    });
    decisions.forEach((decision, index) => {
      const result = results[index]!;
      this.emitDelta(toolReturnDelta(runId, decision.spec.toolCallId, result.isError ? "error" : "success", result.toolReturn));
    });
    // The tool results go straight back to the model: the next step starts now.
    if (!this.signal.aborted) this.ensureStep();
    await this.host.flush();
    return results;
  }

  #notFound(name: string): ScriptedToolResult {
    const available = this.tools.map((tool) => tool.name).join(", ");
    return plainFailure(`Tool not found: ${name}. Available tools: ${available}`);
  }

  #emitMessage(messageType: string, id: string, fields: Record<string, unknown>): void {
    this.emitDelta(messageDelta(messageType, id, this.runtime, this.runId, ++this.#seqId, fields));
  }

  /** @internal */
  emitDelta(delta: Record<string, unknown>): void {
    this.host.emit(streamDelta(delta));
  }
}
