/**
 * `SidecarSession`: one SDK session driven by the host. It opens the session
 * with the host's tools (advertise-only schemas, every call carried to the
 * host), runs one turn at a time — `turn_event` frames as the turn yields
 * events, then exactly one `turn_end` with the turn's fault — and closes.
 * The turn's state (its id, whether the host aborted it, its client tool
 * calls) lives in one `RunningTurn` record.
 */
import { DEFAULT_CALL_LIMITS } from "../calls/index.js";
import { isToolrelayError, ToolrelayError } from "../errors.js";
import { createSession } from "../session/create-session.js";
import type { Session } from "../session/session.js";
import type { SessionOptions } from "../session/session-options.js";
import type { Turn } from "../session/turn.js";
import type { CloudEnvironmentSelector } from "../backends/cloud-environment.js";
import type { Diagnostics } from "./diagnostics.js";
import type { HostApprovals } from "./host-approvals.js";
import type { HostCalls } from "./host-calls.js";
import type { OpenSessionFrame, SendFrame, SidecarBackend } from "./host-frames.js";
import { hostClientTools } from "./host-tools.js";
import { APPROVALS_PROTOCOL_VERSION } from "./protocol-values.js";
import type { SidecarFrame } from "./sidecar-frames.js";
import { toolOutcomeOf, turnFault, type ToolOutcome, type TurnEnding } from "./turn-fault.js";
import { wireTurnEvent } from "./wire-turn-event.js";

interface RunningTurn {
  id: string;
  sdkTurn: Turn | undefined;
  aborted: boolean;
  /** tool_call_id → the host call id of its latest execution. */
  hostCalls: Map<string, string>;
  calls: Array<{ call: string | null; tool_call_id: string; tool: string; outcome: ToolOutcome }>;
  /** Settles once `turn_end` was written. */
  ended: Promise<void>;
}

export interface SidecarSessionParts {
  send(frame: SidecarFrame): void;
  hostCalls: HostCalls;
  /** The approvals waiting for the host's answers (sessions whose host said `approvals: true`). */
  hostApprovals: HostApprovals;
  /** The protocol version agreed in `hello` / `welcome`: approvals need 2. */
  version: number;
  diagnostics: Diagnostics;
  /** Largest `max_input_bytes` a session may ask for (a tool call must fit in one frame). */
  maxInputBytes: number;
  /** Called when the link closed for good by itself (not through `close`). */
  onLinkClosed(session: SidecarSession): void;
}

export class SidecarSession {
  readonly id: string;
  #session: Session;
  #parts: SidecarSessionParts;
  #turn: RunningTurn | undefined;
  #closing: Promise<void> | undefined;

  // biome-ignore lint/style/useConsistentMemberAccessibility: a constructor cannot be #private; open() is the way in
  private constructor(id: string, session: Session, parts: SidecarSessionParts) {
    this.id = id;
    this.#session = session;
    this.#parts = parts;
  }

  /** Open the session; rejects with the SDK's `ToolrelayError` (its code becomes the error frame's). */
  static async open(frame: OpenSessionFrame, parts: SidecarSessionParts): Promise<SidecarSession> {
    const id = frame.session;
    const asked = frame.options?.max_input_bytes;
    if (asked !== undefined && asked > parts.maxInputBytes) {
      throw new ToolrelayError(
        "INVALID_OPTIONS",
        `options.max_input_bytes: at most ${parts.maxInputBytes} with this sidecar's frame limit (a tool call must fit in one frame)`,
      );
    }
    checkApprovals(frame, parts.version);
    let self: SidecarSession | undefined;
    const tools = hostClientTools(frame.tools, frame.options?.tool_timeout_ms, (tool, input, timeoutMs, context) =>
      parts.hostCalls.run({
        session: id,
        turn: self === undefined ? null : (self.#turn?.id ?? null),
        tool: tool.name,
        input,
        timeoutMs,
        context,
        onSent: (call) => {
          if (self !== undefined) self.#turn?.hostCalls.set(context.toolCallId, call);
        },
      }),
    );
    const approvalTimeoutMs = frame.options?.approval_timeout_ms ?? DEFAULT_CALL_LIMITS.approvalTimeoutMs;
    const canUseTool: SessionOptions["canUseTool"] =
      frame.options?.approvals === true
        ? (request) =>
            parts.hostApprovals.ask({
              session: id,
              turn: self === undefined ? null : (self.#turn?.id ?? null),
              timeoutMs: approvalTimeoutMs,
              request,
            })
        : undefined;
    const session = await createSession(sessionOptions(frame, tools, parts.maxInputBytes, canUseTool));
    self = new SidecarSession(id, session, parts);
    self.#listen();
    return self;
  }

  get agentId(): string {
    return this.#session.agentId;
  }

  get conversationId(): string {
    return this.#session.conversationId;
  }

  /** The id of the running turn, if any. */
  get runningTurn(): string | undefined {
    return this.#turn?.id;
  }

  #listen(): void {
    const session = this.#session;
    session.on("tool-call-end", (event) => {
      const turn = this.#turn;
      if (turn === undefined) return;
      turn.calls.push({
        call: turn.hostCalls.get(event.toolCallId) ?? null,
        tool_call_id: event.toolCallId,
        tool: event.toolName,
        outcome: toolOutcomeOf(event.outcome),
      });
    });
    session.on("error", (error) => {
      this.#parts.diagnostics.log("session-error", { session: this.id, code: error.code });
      this.#parts.send({
        type: "error",
        code: error.code.toLowerCase(),
        message: error.message,
        frame_type: null,
        session: this.id,
        turn: this.#turn?.id ?? null,
        call: null,
      });
    });
    session.on("connection-state-change", ({ state }) => {
      this.#parts.diagnostics.log("link-state", { session: this.id, state });
      if (state === "closed" && this.#closing === undefined) this.#parts.onLinkClosed(this);
    });
  }

  /** Start a turn. Always ends in exactly one `turn_end` for `frame.turn`. */
  send(frame: SendFrame): void {
    if (this.#turn !== undefined || this.#closing !== undefined) {
      const error =
        this.#closing !== undefined
          ? "the session is closing"
          : `turn ${this.#turn!.id} is still running; wait for its turn_end or abort it`;
      const fault = this.#closing !== undefined ? "session_closed" : "turn_in_progress";
      this.#parts.send({
        type: "turn_end",
        session: this.id,
        turn: frame.turn,
        fault,
        stop: null,
        message: error,
        text: "",
        tool_calls: [],
      });
      return;
    }
    let finish!: () => void;
    const turn: RunningTurn = {
      id: frame.turn,
      sdkTurn: undefined,
      aborted: false,
      hostCalls: new Map(),
      calls: [],
      ended: new Promise((resolve) => (finish = resolve)),
    };
    this.#turn = turn;
    void this.#run(turn, frame).finally(() => {
      if (this.#turn === turn) this.#turn = undefined;
      finish();
    });
  }

  async #run(turn: RunningTurn, frame: SendFrame): Promise<void> {
    let ending: TurnEnding;
    try {
      const sdkTurn = this.#session.send(frame.message);
      turn.sdkTurn = sdkTurn;
      if (turn.aborted) void sdkTurn.abort();
      for await (const event of sdkTurn) {
        const wire = wireTurnEvent(event);
        if (wire !== undefined) this.#parts.send({ type: "turn_event", session: this.id, turn: turn.id, event: wire });
      }
      ending = { kind: "finished", result: await sdkTurn.result, aborted: turn.aborted };
    } catch (error) {
      ending = { kind: "failed", error };
    }
    const verdict = turnFault(ending, turn.calls);
    const result = ending.kind === "finished" ? ending.result : undefined;
    this.#parts.diagnostics.log("turn-end", { session: this.id, turn: turn.id, fault: verdict.fault, stop: result?.stopReason });
    // The turn is over before the host reads its turn_end: a `send` right after it starts the next turn, not turn_in_progress.
    if (this.#turn === turn) this.#turn = undefined;
    this.#parts.send({
      type: "turn_end",
      session: this.id,
      turn: turn.id,
      fault: verdict.fault,
      stop: result?.stopReason ?? null,
      message: verdict.message ?? null,
      text: result?.text ?? "",
      tool_calls: turn.calls,
    });
  }

  /** Abort the running turn (only `turnId`, when given). `false` when no such turn runs. */
  abort(turnId: string | undefined): boolean {
    const turn = this.#turn;
    if (turn === undefined || (turnId !== undefined && turn.id !== turnId)) return false;
    turn.aborted = true;
    void turn.sdkTurn?.abort();
    return true;
  }

  /** Close the session: the running turn ends first (its `turn_end` is written), then the link closes. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const turn = this.#turn;
      await this.#session.close().catch((error: unknown) => {
        this.#parts.diagnostics.log("close-failed", { session: this.id, code: isToolrelayError(error) ? error.code : "unknown" });
      });
      this.#parts.hostCalls.abandon("the session was closed", this.id);
      this.#parts.hostApprovals.abandon("the session was closed", this.id);
      await turn?.ended;
    })();
    return this.#closing;
  }
}

/**
 * Approvals need protocol version 2, and a `needs_approval` tool needs a host that answers them
 * (`options.approvals: true`). Throws `INVALID_OPTIONS` naming the protocol's fields.
 */
function checkApprovals(frame: OpenSessionFrame, version: number): void {
  const options = frame.options ?? {};
  const asking = frame.tools.flatMap((tool, index) => (tool.needs_approval === true ? [`tools[${index}] "${tool.name}"`] : []));
  if (version < APPROVALS_PROTOCOL_VERSION) {
    const used = [
      ...(options.approvals === undefined ? [] : ["options.approvals"]),
      ...(options.approval_timeout_ms === undefined ? [] : ["options.approval_timeout_ms"]),
      ...frame.tools.flatMap((tool, index) => (tool.needs_approval === undefined ? [] : [`tools[${index}].needs_approval`])),
    ];
    if (used.length > 0)
      throw new ToolrelayError(
        "INVALID_OPTIONS",
        `${used.join(", ")}: approvals need protocol version ${APPROVALS_PROTOCOL_VERSION}; this host and sidecar agreed on version ${version} in hello/welcome`,
      );
  }
  if (asking.length > 0 && options.approvals !== true)
    throw new ToolrelayError(
      "INVALID_OPTIONS",
      `${asking.join(", ")}: "needs_approval": true needs a host that answers approvals; set "approvals": true in open_session's options and answer each approval_request with approval_response`,
    );
}

/** The SDK's session options for an `open_session` frame. Only what the host handed over: no credential is read from anywhere else. */
function sessionOptions(
  frame: OpenSessionFrame,
  tools: SessionOptions["tools"],
  maxInputBytes: number,
  canUseTool: SessionOptions["canUseTool"],
): SessionOptions {
  const options = frame.options ?? {};
  return {
    backend: backendOptions(frame.backend),
    agent: frame.agent,
    ...(frame.conversation === undefined ? {} : { conversation: frame.conversation }),
    tools,
    ...(options.mode === undefined ? {} : { mode: options.mode }),
    ...(options.tool_timeout_ms === undefined ? {} : { toolTimeoutMs: options.tool_timeout_ms }),
    ...(options.request_timeout_ms === undefined ? {} : { requestTimeoutMs: options.request_timeout_ms }),
    ...(options.reconnect_grace_ms === undefined ? {} : { reconnectGraceMs: options.reconnect_grace_ms }),
    ...(options.turn_stall_probe_ms === undefined ? {} : { turnStallProbeMs: options.turn_stall_probe_ms }),
    ...(options.approval_timeout_ms === undefined ? {} : { approvalTimeoutMs: options.approval_timeout_ms }),
    ...(canUseTool === undefined ? {} : { canUseTool }),
    maxInputBytes: options.max_input_bytes ?? maxInputBytes,
    clientInfo: options.client_info ?? { name: "toolrelay-sidecar" },
  };
}

function backendOptions(backend: SidecarBackend): SessionOptions["backend"] {
  if (backend.kind === "local")
    return { kind: "local", url: backend.url, ...(backend.token === undefined ? {} : { token: backend.token }) };
  const environment: CloudEnvironmentSelector =
    "connection_id" in backend.environment
      ? { connectionId: backend.environment.connection_id }
      : "device_id" in backend.environment
        ? { deviceId: backend.environment.device_id }
        : backend.environment;
  return {
    kind: "cloud",
    // Always explicit: with apiKey given, the SDK never looks at LETTA_API_KEY.
    apiKey: backend.api_key,
    environment,
    ...(backend.base_url === undefined ? {} : { baseUrl: backend.base_url }),
    ...(backend.headers === undefined ? {} : { headers: backend.headers }),
  };
}
