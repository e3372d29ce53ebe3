import type { ToolrelayError } from "../errors.js";
import type { CallOutcome, CallRecord } from "../calls/index.js";
import type { ClientTool, ToolInputSchema, ToolSource } from "../tools/index.js";
import type { LinkState } from "../transport/runtime-link.js";

/** A client tool's callback starts (its input was valid). */
export interface ToolCallStartEvent {
  toolName: string;
  toolCallId: string;
  requestId: string;
  agentId: string;
  conversationId: string;
}

/**
 * A client tool call reached its outcome (every call that reached the table, run or not). Typed by
 * the session's tools: `toolName` tells which tool, and `output` has that tool's output type.
 */
export interface ToolCallEndEvent<TOutput = unknown, TName extends string = string> {
  toolName: TName;
  toolCallId: string;
  agentId: string;
  conversationId: string;
  /** Every request id this execution answered (more than one when a duplicate joined it). */
  requestIds: string[];
  /** How the call ended: `ok`, `tool-error`, `invalid-input`, `unknown-tool`, `input-too-large`, `denied` (not approved: not run), `timeout`, `cancelled`, `disconnected`, `busy`. */
  outcome: CallOutcome["kind"];
  /**
   * When `ok`: the value `execute` returned — checked by the tool's `outputSchema` (then the
   * schema's output) — not the text the model got. `undefined` for any other outcome.
   */
  output: TOutput | undefined;
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

/** A request for a call this session already knows: nothing ran again. */
export interface ToolCallDuplicateEvent {
  toolName: string;
  toolCallId: string;
  requestId: string;
  /**
   * `joined` a running call; `replayed` its cached answer; `resent` the cached answer again for a
   * request id re-offered on a newer connection epoch; `expired` (the outcome was forgotten: "outcome
   * unknown"); `duplicate` (this request id already has its answer on this epoch: nothing written).
   */
  disposition: "joined" | "replayed" | "resent" | "expired" | "duplicate";
}

/** A tool call id seen before with another input: a new call, and it ran (providers reuse ids such as `call_0`). */
export interface ToolCallReusedEvent {
  toolName: string;
  toolCallId: string;
  requestId: string;
}

/** A request answered with an error and not run (not a call outcome: no `tool-call-end` follows). */
export interface ToolCallRefusedEvent {
  /** At most 128 characters of it. */
  requestId: string;
  toolName: string;
  /** Why, in words (an id over its length limit, no runtime scope, a request id reused for another call, the session closed). */
  reason: string;
}

/** A frame for another agent or conversation than this session's: left alone (the runtime replays other people's approvals to every connection). */
export interface ForeignFrameEvent {
  type: string;
  requestId: string;
  agentId: string;
  conversationId: string;
}

/** A running tool reported progress through `context.progress(message)` (local only: the protocol has no progress frame). */
export interface ToolCallProgressEvent {
  toolName: string;
  toolCallId: string;
  message: string;
}

/** The link to the runtime changed state (after the change). */
export interface ConnectionStateChangeEvent {
  state: LinkState;
  previous: LinkState;
}

/** The session's tool set changed (a tool source such as an MCP server changed its tools) and the runtime confirmed the new set. */
export interface ToolsChangeEvent {
  /** Every client tool name of the session now, in registration order. */
  names: string[];
}

/** What `createSession` takes as `tools`: tools made with `defineTool`, and tool sources. */
export type SessionToolList = readonly (ClientTool | ToolSource)[];

/**
 * The `tool-call-end` event of a session whose tools are `TTools`: one variant per client tool,
 * with its name and output type (a tool source's tools: any name, `unknown` output).
 */
export type ToolCallEndEventOf<TTools extends SessionToolList> = TTools[number] extends infer TTool
  ? TTool extends ClientTool<ToolInputSchema, infer TOutput, infer TName>
    ? ToolCallEndEvent<TOutput, TName>
    : ToolCallEndEvent
  : never;

/** The session's events (`session.on(name, listener)`); none is needed for the session to work. */
export interface SessionEvents<TTools extends SessionToolList = SessionToolList> {
  "tool-call-start": [event: ToolCallStartEvent];
  "tool-call-end": [event: ToolCallEndEventOf<TTools>];
  "tool-call-progress": [event: ToolCallProgressEvent];
  "tool-call-late": [event: ToolCallLateEvent];
  "tool-call-duplicate": [event: ToolCallDuplicateEvent];
  "tool-call-reused": [event: ToolCallReusedEvent];
  "tool-call-refused": [event: ToolCallRefusedEvent];
  "foreign-frame": [event: ForeignFrameEvent];
  "connection-state-change": [event: ConnectionStateChangeEvent];
  "tools-change": [event: ToolsChangeEvent];
  /** Problems the session handled itself (a dropped link, an invalid frame, a failing callback). Never thrown. */
  error: [error: ToolrelayError];
}

/**
 * Listeners for `createSession({ on })`: attached before the session connects, so they see what
 * happens while it starts — a call the runtime offers again at once (a relay re-offer, a journal's
 * recorded answer) settles before `createSession` resolves. One listener per event; add more
 * with `session.on` later.
 */
export type SessionListeners<TTools extends SessionToolList = SessionToolList> = {
  [K in keyof SessionEvents<TTools>]?: ((...args: SessionEvents<TTools>[K]) => void) | undefined;
};

/** Every event name of {@link SessionEvents} (a missing or extra name does not compile). */
export const SESSION_EVENT_NAMES = Object.keys({
  "tool-call-start": true,
  "tool-call-end": true,
  "tool-call-progress": true,
  "tool-call-late": true,
  "tool-call-duplicate": true,
  "tool-call-reused": true,
  "tool-call-refused": true,
  "foreign-frame": true,
  "connection-state-change": true,
  "tools-change": true,
  error: true,
} satisfies Record<keyof SessionEvents, true>) as (keyof SessionEvents)[];

/** The `tool-call-end` event of a settled call (its `output` is read before the table lets it go). */
export function toolCallEndEvent(record: CallRecord): ToolCallEndEvent {
  const { toolName, toolCallId, agentId, conversationId } = record;
  const outcome = record.outcome!;
  const requestIds = record.deliveries.map((delivery) => delivery.requestId);
  const durationMs = record.settledAt - record.startedAt;
  const output = outcome.kind === "ok" ? outcome.output : undefined;
  return { toolName, toolCallId, agentId, conversationId, requestIds, outcome: outcome.kind, output, detail: outcome, durationMs };
}
