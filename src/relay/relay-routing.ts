/**
 * The pure part of routing: what the relay needs to know about a frame (its type, request id,
 * runtime), which channel a listener frame belongs on, and stamping a delivery `seq`.
 * Frames are forwarded as the text they arrived in; only `seq` is added towards the SDK.
 */
import { parseJson } from "../internal/safe-json.js";

/** The two SDK status channels (and the listener's two sockets in split mode). */
export type Channel = "control" | "stream";

/** What routing reads from a frame. */
export interface FrameFacts {
  type: string;
  /** `request_id` when it is a non-empty string. */
  requestId: string | undefined;
  /** `agent:<id>::conversation:<id>` from `runtime` or top-level `agent_id`/`conversation_id`. */
  runtimeKey: string | undefined;
  /** The parsed object (never merged into anything; read-only use). */
  body: Record<string, unknown>;
}

/** Frame types the listener sends on its stream socket (PROTOCOL.md §4.2). */
export const STREAM_FRAME_TYPES: ReadonlySet<string> = new Set([
  "stream_delta",
  "update_device_status",
  "update_loop_status",
  "update_queue",
  "update_subagent_state",
]);

/** Frames the relay answers itself and never forwards. */
export const PING_FRAME = JSON.stringify({ type: "ping" });
export const PONG_FRAME = JSON.stringify({ type: "pong" });

/** Depth limit for frames the relay parses (it only reads top-level fields). */
const MAX_FRAME_DEPTH = 256;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** The key the relay uses for one runtime. A missing conversation counts as `"default"`. */
export function runtimeKeyOf(agentId: string, conversationId: string | undefined): string {
  return `agent:${agentId}::conversation:${conversationId ?? "default"}`;
}

/**
 * Runtime of a frame: `runtime.{agent_id,conversation_id}`, else top-level `agent_id`/`conversation_id`.
 * A `runtime_start` without `conversation_id` creates a conversation, so its runtime is unknown
 * until the response names it.
 */
export function frameRuntimeKey(body: Record<string, unknown>): string | undefined {
  if (body.type === "runtime_start") {
    const agentId = nonEmptyString(body.agent_id);
    const conversationId = nonEmptyString(body.conversation_id);
    return agentId && conversationId ? runtimeKeyOf(agentId, conversationId) : undefined;
  }
  const runtime = body.runtime;
  if (isRecord(runtime)) {
    const agentId = nonEmptyString(runtime.agent_id);
    if (agentId) return runtimeKeyOf(agentId, nonEmptyString(runtime.conversation_id));
  }
  const agentId = nonEmptyString(body.agent_id);
  if (agentId) return runtimeKeyOf(agentId, nonEmptyString(body.conversation_id));
  return undefined;
}

/** Reads a frame's routing facts; `undefined` for anything that is not a JSON object with a string `type`. */
export function readFrameFacts(text: string): FrameFacts | undefined {
  const parsed = parseJson(text, MAX_FRAME_DEPTH);
  if (!parsed.ok || !isRecord(parsed.value)) return undefined;
  const body = parsed.value;
  const type = nonEmptyString(body.type);
  if (type === undefined) return undefined;
  return { type, requestId: nonEmptyString(body.request_id), runtimeKey: frameRuntimeKey(body), body };
}

/** The SDK channel for a frame that arrived on a listener's single socket. */
export function channelForType(type: string): Channel {
  return STREAM_FRAME_TYPES.has(type) ? "stream" : "control";
}

/** Whether a listener frame answers an SDK request (ends the request's routing entry). */
export function isResponseType(type: string): boolean {
  return type.endsWith("_response") || type === "input_accepted";
}

/**
 * The frame text with a delivery `seq` appended as the last key (so it wins over any `seq` the
 * frame already had). `text` must be a JSON object (checked by {@link readFrameFacts}).
 */
export function withSeq(text: string, seq: number): string {
  const trimmed = text.trimEnd();
  const body = trimmed.slice(0, -1).trimEnd();
  const empty = body.trimStart() === "{";
  return `${body}${empty ? "" : ","}"seq":${seq}}`;
}

/** The runtimes an SDK command registers external tools for (non-empty groups) or clears. */
export interface ToolRegistration {
  /** Runtimes given tools by this command. */
  registered: string[];
  /** Runtimes whose tools this command removes. */
  cleared: string[];
  /** The command carried at least one non-empty tool group. */
  registersAny: boolean;
}

function hasTools(groups: unknown): boolean {
  return Array.isArray(groups) && groups.some((group) => isRecord(group) && Array.isArray(group.tools) && group.tools.length > 0);
}

/** Tool registration effects of a `runtime_start` or `runtime_external_tools_update` (PROTOCOL.md §5.1–5.2). */
export function toolRegistrationOf(facts: FrameFacts): ToolRegistration | undefined {
  if (facts.type === "runtime_start") {
    const registersAny = hasTools(facts.body.external_tools);
    const runtimes = facts.runtimeKey ? [facts.runtimeKey] : [];
    return registersAny
      ? { registered: runtimes, cleared: [], registersAny }
      : { registered: [], cleared: runtimes, registersAny };
  }
  if (facts.type === "runtime_external_tools_update" && Array.isArray(facts.body.updates)) {
    const result: ToolRegistration = { registered: [], cleared: [], registersAny: false };
    for (const update of facts.body.updates) {
      if (!isRecord(update) || !Array.isArray(update.runtimes)) continue;
      const gives = hasTools(update.external_tools);
      if (gives) result.registersAny = true;
      for (const runtime of update.runtimes) {
        if (!isRecord(runtime)) continue;
        const agentId = nonEmptyString(runtime.agent_id);
        if (!agentId) continue;
        const key = runtimeKeyOf(agentId, nonEmptyString(runtime.conversation_id));
        (gives ? result.registered : result.cleared).push(key);
      }
    }
    return result;
  }
  return undefined;
}
