/**
 * Public types of the scripted runtime (`toolrelay/testing`): its options, the
 * turn API a script receives, and the records it keeps for assertions.
 */
import type { Timers } from "../internal/timers.js";

/** `{ agent_id, conversation_id }`, exactly as on the wire. */
export interface ScriptedRuntimeScope {
  agent_id: string;
  conversation_id: string;
}

/**
 * Permission mode of a runtime. `"unrestricted"` asks about no call, `"strict"` about every call;
 * `"standard"` and `"acceptEdits"` ask about every client tool call and about the runtime's own
 * tools except the read-only ones (`Read`, `Glob`, `Grep`, `LS`, `TodoWrite`, a `Bash` running one
 * plain `echo`/`printf`/`ls`/`pwd`/`cat`/`head`/`tail`/`wc`/`date`/`whoami`/`true` inside the
 * working directory); `"acceptEdits"` also runs `Write`, `Edit`, `MultiEdit` and `NotebookEdit`
 * unasked. A narrow model of Letta Code 0.32.18's classifier: a call it does not know is asked.
 */
export type ScriptedPermissionMode = "unrestricted" | "standard" | "acceptEdits" | "strict";

/** A script: runs once per `create_message` input (queued inputs run one after another). */
export type TurnScript = (turn: ScriptedTurn) => Promise<void> | void;

/** Options of `startScriptedRuntime`. Only `script` is required. */
export interface StartScriptedRuntimeOptions {
  /**
   * Plays the model: called once for every accepted `create_message` input (a repeated input
   * too: the runtime does not deduplicate them). Returning ends the turn (`end_turn`);
   * `turn.fail(message)` ends it as an error turn; a throw (a failed `expect()`) ends it as an
   * error turn and is a script error (`runtime.scriptErrors`, `close()` rejects).
   */
  script: TurnScript;
  /** Interface to bind. Default `"127.0.0.1"`. A non-loopback host requires `authToken`. */
  host?: string | undefined;
  /** TCP port. Default `0` (an ephemeral port; read it from `runtime.url` / `runtime.port`). */
  port?: number | undefined;
  /**
   * When set, every upgrade (and `GET /app-server-info`) must carry
   * `Authorization: Bearer <authToken>`; anything else gets HTTP 401. Default: no auth, and an
   * upgrade carrying an `Origin` header gets 403 (like the real app-server).
   */
  authToken?: string | undefined;
  /**
   * Permission mode of a runtime whose `runtime_start` names no `mode`. Default `"unrestricted"`
   * (the real default): tools run without asking. In any other mode the runtime sends a
   * `control_request` (`can_use_tool`, `perm-<tool_call_id>`) before each tool call the mode
   * does not run unasked (see `ScriptedPermissionMode`) and waits for the client's
   * `approval_response`.
   */
  permissionMode?: ScriptedPermissionMode | undefined;
  /** How long the runtime waits for an `external_tool_call_response`. Default `300_000` (5 min, like the real runtime). */
  externalToolTimeoutMs?: number | undefined;
  /**
   * The first `missedAborts` `abort_message`s of a running turn are answered
   * `{ aborted: false, success: true }` and change nothing, as the real runtime (0.32.18)
   * answered about one abort in five of a running turn under load. Default `0`.
   */
  missedAborts?: number | undefined;
  /**
   * A turn whose input arrives within this many ms of the previous `turn_finished` of its
   * conversation reports, in every `update_loop_status` until it ends, `WAITING_ON_INPUT` with no
   * active runs and no executing tool calls (the run map stays right) — as the real runtime
   * (0.32.18) does: its status is read from a conversation record that was dropped when the
   * previous turn went idle. Default `300` (the real runtime was seen lying at 0, 100 and 250 ms
   * pauses, not at 500 ms). `0` turns it off.
   */
  staleLoopStatusWindowMs?: number | undefined;
  /** Largest inbound WebSocket message, in bytes (ws `maxPayload`). Default `16 * 1024 * 1024`. */
  maxPayloadBytes?: number | undefined;
  /** Interval of protocol-level pings; a socket missing 3 pongs in a row is terminated. `0` disables. Default `30_000`. */
  heartbeatIntervalMs?: number | undefined;
  /** `letta_code_version` reported by `app_server_info_response`. Default `"0.32.18"`. */
  version?: string | undefined;
  /**
   * The clock of the runtime: the external tool call timeout, the heartbeat and every timestamp
   * it writes. Default: the system timers (which vitest's fake timers replace, too).
   */
  timers?: Timers | undefined;
}

/** A text or image block, as an `external_tool_call_response` carries it. */
export interface ScriptedContentBlock {
  type: string;
  text?: string | undefined;
  data?: string | undefined;
  mimeType?: string | undefined;
}

/** What a tool call came back with, as the model would see it. */
export interface ScriptedToolResult {
  /** The result content as the client sent it (`[]` when the call failed without a result). */
  content: ScriptedContentBlock[];
  /** `true` for `is_error: true`, a client `error`, a timeout, a lost connection, a denial, an unknown tool. */
  isError: boolean;
  /** The failure message when there was no result: the client's `error`, "External tool call timed out: x", "Listener connection closed", ... */
  error?: string | undefined;
  /** The tool-return text the model receives (normalized, clamped to 32,000 characters, error-wrapped). */
  toolReturn: string;
}

/** One tool call of {@link ScriptedTurn.callTools}. */
export interface ScriptedToolCallSpec {
  name: string;
  input?: Record<string, unknown> | undefined;
  /** The model's tool-call id. Default: a fresh `call-<uuid>`. */
  toolCallId?: string | undefined;
}

/** An external tool visible to a turn. */
export interface ScriptedVisibleTool {
  name: string;
  label?: string | undefined;
  description: string;
  parameters: Record<string, unknown>;
  scopeId?: string | undefined;
  /** The connection that registered it (and receives its calls). */
  connectionId: string;
}

/** The API a script drives. Every method resolves once its frames are written. */
export interface ScriptedTurn {
  /** The runtime this turn belongs to. */
  readonly runtime: ScriptedRuntimeScope;
  /** The connection driving the turn: the one whose `input` started it, or the subscriber it passed to when that one closed. */
  readonly connectionId: string;
  /** `turn_id` of the final `turn_finished` frame. */
  readonly turnId: string;
  /** `run_id` of the current model step (each round after tool results is a new step with a new `local-run-<n>`). */
  readonly runId: string;
  /** Text of the last user message (string content, or its text parts joined with "\n"). */
  readonly userText: string;
  /** `payload.messages` as received. */
  readonly messages: readonly unknown[];
  /** The whole `create_message` payload as received (allowlist, scope ids, ...). */
  readonly payload: Readonly<Record<string, unknown>>;
  /** External tools visible to this turn, computed when it started (like the real runtime). */
  readonly tools: readonly ScriptedVisibleTool[];
  /**
   * Aborted by `abort_message` for this runtime, when the turn's last subscribed connection
   * closes, or by `runtime.close()`. After that `say` / `reason` / `runBuiltinTool` emit nothing
   * and new tool calls return "Interrupted by user" at once; a call already waiting keeps waiting
   * for its answer, timeout or connection close (the real runtime has no cancel frame).
   */
  readonly signal: AbortSignal;
  /**
   * End this turn as an error turn, with `message` as the runtime's error (`turn_finished`
   * `stop_reason: "error"`, an `error_message` and a terminal `loop_error`), like a failing model.
   * Unlike a throw, it is not a script error: `runtime.close()` does not reject for it.
   */
  fail(message: string): never;
  /** Stream an `assistant_message` delta. */
  say(text: string): Promise<void>;
  /** Stream a `reasoning_message` delta. */
  reason(text: string): Promise<void>;
  /** Call one external tool (see {@link ScriptedTurn.callTools}). */
  callTool(name: string, input?: Record<string, unknown>, options?: { toolCallId?: string | undefined }): Promise<ScriptedToolResult>;
  /**
   * Call several tools from one model response: their approval requests and `client_tool_start`
   * deltas come first, then the `external_tool_call_request`s one after another (each after the
   * previous answer), like the real runtime. Results are in input order.
   */
  callTools(calls: readonly ScriptedToolCallSpec[]): Promise<ScriptedToolResult[]>;
  /**
   * Send the request of an earlier call of this turn again (same `tool_call_id`, tool and input)
   * under a fresh `request_id`: a second execution the runtime asks for. No deltas are emitted.
   * The SDK takes it for the same call while that call's answer is still owed, or after a
   * reconnect within the same turn (the runtime asking again for an answer it lost); else it is a
   * new model request and runs (see docs/settlement.md, "What identifies a call").
   */
  resendToolCall(toolCallId: string): Promise<ScriptedToolResult>;
  /**
   * Write the last request of `toolCallId` again — the very same frame, its `request_id` too — as a
   * relay re-offers an outstanding request to a session. Resolves with that request's result.
   * Throws when no such request was written to a connection that is still open.
   */
  redeliverToolCall(toolCallId: string): Promise<ScriptedToolResult>;
  /**
   * A tool the runtime runs itself (Bash, Read, …), as the real runtime runs one: the model's
   * `approval_request_message`, `stop_reason: requires_approval`, approval classification, a
   * `control_request` unless the mode runs the call unasked (`ScriptedPermissionMode`: never in
   * `strict`, always in `unrestricted`, read-only calls in `standard`; a denial runs nothing), `client_tool_start`, then the
   * output streamed as growing `tool_return_message` snapshots of one result (one per line so
   * far; `stream: false` for none), `client_tool_end` and the final `tool_return_message`. No
   * external request. Resolves with what the model receives.
   */
  runBuiltinTool(
    name: string,
    args: Record<string, unknown>,
    output: string,
    options?: { status?: "success" | "error" | undefined; stream?: boolean | undefined; toolCallId?: string | undefined },
  ): Promise<ScriptedToolResult>;
  /**
   * A subagent (what the runtime's `Agent` tool starts). Its frames go out **on this turn's
   * runtime scope** with `subagent_id` set — text, tool calls, its own `stop_reason`s — exactly
   * like the real runtime's, and `update_subagent_state` lists it. Emits nothing once the turn
   * was aborted.
   */
  subagent(options?: ScriptedSubagentOptions): ScriptedSubagent;
}

/** Options of `turn.subagent()`: what the runtime's `update_subagent_state` says about it. */
export interface ScriptedSubagentOptions {
  /** Default `subagent-<ms>-<n>`, like the runtime's. */
  subagentId?: string | undefined;
  /** Shown in `update_subagent_state`. Defaults: `"subagent"`, `"General-purpose"`, `""`. */
  description?: string | undefined;
  subagentType?: string | undefined;
  prompt?: string | undefined;
  /** The parent's `Agent` tool call that started it, if any. */
  toolCallId?: string | undefined;
}

/** A subagent's stream (see {@link ScriptedTurn.subagent}). */
export interface ScriptedSubagent {
  readonly subagentId: string;
  /** An `assistant_message` of the subagent. */
  say(text: string): Promise<void>;
  /** A `reasoning_message` of the subagent. */
  reason(text: string): Promise<void>;
  /** A tool the subagent runs: its step ends with `requires_approval`, then `tool_call_message` and `tool_return_message`. */
  runTool(
    name: string,
    args: Record<string, unknown>,
    output: string,
    options?: { status?: "success" | "error" | undefined; toolCallId?: string | undefined },
  ): Promise<void>;
  /** Its last step ends with `stop_reason: end_turn`; `update_subagent_state` shows it `completed`. */
  finish(): Promise<void>;
}

/** What happened to one `external_tool_call_request`. */
export type ScriptedCallStatus = "pending" | "answered" | "timed-out" | "connection-closed" | "send-failed";

/** One `external_tool_call_request` the runtime sent, with its outcome. */
export interface ScriptedCallRecord {
  requestId: string;
  connectionId: string;
  runtime: ScriptedRuntimeScope;
  scopeId?: string | undefined;
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  status: ScriptedCallStatus;
  /** The `external_tool_call_response` frame, once one arrived. */
  response?: Record<string, unknown> | undefined;
  /** What the script received, once settled. */
  result?: ScriptedToolResult | undefined;
}

/** One frame received from, or sent to, a client. */
export interface ScriptedFrameRecord {
  connectionId: string;
  /** The frame's `type`, when it is a JSON object with a string `type`. */
  type: string | undefined;
  /** The parsed JSON, or `undefined` when the text was not JSON. */
  frame: unknown;
  /** The raw text. */
  text: string;
}

/** One external tool registration held by the runtime. */
export interface ScriptedRegistration extends ScriptedVisibleTool {
  runtime: ScriptedRuntimeScope;
}

/** A running scripted runtime. */
export interface ScriptedRuntime {
  /** `ws://<host>:<port>/ws`. */
  readonly url: string;
  readonly port: number;
  /** Every `external_tool_call_request` sent, in order. */
  readonly calls: readonly ScriptedCallRecord[];
  /** Every frame received from clients, in order (invalid ones included). */
  readonly frames: readonly ScriptedFrameRecord[];
  /** Every frame sent to clients, in order. */
  readonly sentFrames: readonly ScriptedFrameRecord[];
  /** Number of open client sockets. */
  readonly connections: number;
  /**
   * What scripts threw — a failed `expect()`, a bug — in order (not `turn.fail()`). Each one also
   * ended its turn as an error turn, so the client side sees it; `close()` then rejects with it.
   */
  readonly scriptErrors: readonly unknown[];
  /** Current external tool registrations, in registration order. */
  registrations(): ScriptedRegistration[];
  /**
   * Close every client socket with `code` (default 1001; 1006 drops the TCP connection without a
   * close frame), which runs the per-connection cleanup: calls rejected, registrations dropped.
   */
  dropConnections(code?: number): void;
  /**
   * Stop the server: aborts running turns, settles pending calls with "Listener runtime stopped",
   * terminates sockets. It does not wait for scripts to return. Idempotent. Rejects, once stopped,
   * when a script threw (see `scriptErrors`): with that error, or an `AggregateError` of all of
   * them — so `await runtime.close()` in a test's teardown fails the test.
   */
  close(): Promise<void>;
}
