/**
 * The pure part of routing: which channel a listener frame belongs on, which frames answer an
 * SDK request, and which runtimes an SDK command registers tools for. Frames are forwarded as
 * the bytes they arrived in; only `seq` is added towards the SDK (relay-frame.ts).
 */
import { runtimeKeyOf, type RelayFrame } from "./relay-frame.js";

/** The two SDK status channels (and the listener's two sockets in split mode). */
export type Channel = "control" | "stream";

/** Frame types the listener sends on its stream socket (docs/protocol.md, runtime envelope). */
export const STREAM_FRAME_TYPES: ReadonlySet<string> = new Set([
  "stream_delta",
  "update_device_status",
  "update_loop_status",
  "update_queue",
  "update_subagent_state",
]);

/** The relay's answer to a JSON ping (never forwarded, never given a `seq`). */
export const PONG_FRAME = Buffer.from(JSON.stringify({ type: "pong" }));

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** The SDK channel for a frame that arrived on a listener's single socket. */
export function channelForType(type: string): Channel {
  return STREAM_FRAME_TYPES.has(type) ? "stream" : "control";
}

/** Whether a listener frame answers an SDK request (ends the request's routing entry). */
export function isResponseType(type: string): boolean {
  return type.endsWith("_response") || type === "input_accepted";
}

function hasTools(groups: unknown): boolean {
  return Array.isArray(groups) && groups.some((group) => isRecord(group) && Array.isArray(group.tools) && group.tools.length > 0);
}

/** Whether a `runtime_start` carries at least one non-empty tool group. */
export function startRegistersTools(frame: RelayFrame): boolean {
  return frame.type === "runtime_start" && hasTools(frame.field("external_tools"));
}

/** The runtimes a `runtime_external_tools_update` names, each with whether it gives tools. */
export function toolsUpdateRuntimes(frame: RelayFrame): Array<{ runtimeKey: string; registers: boolean }> | undefined {
  if (frame.type !== "runtime_external_tools_update") return undefined;
  const updates = frame.field("updates");
  if (!Array.isArray(updates)) return [];
  const result: Array<{ runtimeKey: string; registers: boolean }> = [];
  for (const update of updates) {
    if (!isRecord(update) || !Array.isArray(update.runtimes)) continue;
    const registers = hasTools(update.external_tools);
    for (const runtime of update.runtimes) {
      if (!isRecord(runtime)) continue;
      const agentId = nonEmptyString(runtime.agent_id);
      if (agentId) result.push({ runtimeKey: runtimeKeyOf(agentId, nonEmptyString(runtime.conversation_id)), registers });
    }
  }
  return result;
}
