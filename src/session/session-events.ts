import type { ToolrelayError } from "../errors.js";
import type { CallOutcome } from "../calls/index.js";
import type { LinkState } from "../transport/runtime-link.js";

export interface ToolCallStartEvent {
  toolName: string;
  toolCallId: string;
  requestId: string;
  agentId: string;
  conversationId: string;
}

export interface ToolCallEndEvent {
  toolName: string;
  toolCallId: string;
  agentId: string;
  conversationId: string;
  /** Every request id this execution answered (more than one when a duplicate joined it). */
  requestIds: string[];
  /** How the call ended: `ok`, `tool-error`, `invalid-input`, `unknown-tool`, `input-too-large`, `timeout`, `cancelled`, `disconnected`. */
  outcome: CallOutcome["kind"];
  /** The full outcome (for logging; may contain the tool's result). */
  detail: CallOutcome;
  durationMs: number;
}

/** A callback finished after its call had already been settled (timeout, cancel): its result was not sent. */
export interface ToolCallLateEvent {
  toolName: string;
  toolCallId: string;
  outcome: CallOutcome["kind"];
}

/** A request for a tool call that was answered from the replay cache or joined a running call. */
export interface ToolCallDuplicateEvent {
  toolName: string;
  toolCallId: string;
  requestId: string;
  /** `joined` a running call, `replayed` a cached outcome, `expired` (outcome unknown), `duplicate` (this very request id again: ignored), `closed` (session closing: answered cancelled). */
  disposition: "joined" | "replayed" | "expired" | "duplicate" | "closed";
}

/** A running tool reported progress through `context.progress(message)` (local only: the protocol has no progress frame). */
export interface ToolCallProgressEvent {
  toolName: string;
  toolCallId: string;
  message: string;
}

export interface ConnectionStateChangeEvent {
  state: LinkState;
  previous: LinkState;
}

/** The session's tool set changed (a tool source such as an MCP server changed its tools) and the runtime confirmed the new set. */
export interface ToolsChangeEvent {
  /** Every client tool name of the session now, in registration order. */
  names: string[];
}

export interface SessionEvents {
  "tool-call-start": [event: ToolCallStartEvent];
  "tool-call-end": [event: ToolCallEndEvent];
  "tool-call-progress": [event: ToolCallProgressEvent];
  "tool-call-late": [event: ToolCallLateEvent];
  "tool-call-duplicate": [event: ToolCallDuplicateEvent];
  "connection-state-change": [event: ConnectionStateChangeEvent];
  "tools-change": [event: ToolsChangeEvent];
  /** Problems the session handled itself (a dropped link, an invalid frame, a failing callback). Never thrown. */
  error: [error: ToolrelayError];
}
