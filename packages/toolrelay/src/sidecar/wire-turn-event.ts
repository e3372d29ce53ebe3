/**
 * The SDK's turn events in the sidecar protocol's words: snake_case fields,
 * `kind` instead of `type`, `null` instead of a missing value. The `stop`
 * event is not forwarded: `turn_end` carries the stop reason.
 */
import type { StreamEvent, TurnEvent } from "../session/turn-events.js";
import type { WireStreamEvent, WireTurnEvent } from "./sidecar-frames.js";

/** The protocol form of one turn event, or `undefined` for `stop`. */
export function wireTurnEvent(event: TurnEvent): WireTurnEvent | undefined {
  if (event.type === "stop") return undefined;
  if (event.type === "subagent") return { kind: "subagent", subagent_id: event.subagentId, event: wireStreamEvent(event.event) };
  return wireStreamEvent(event);
}

function wireStreamEvent(event: StreamEvent): WireStreamEvent {
  switch (event.type) {
    case "assistant":
    case "reasoning":
      return { kind: event.type, text: event.text, message_id: event.messageId ?? null };
    case "tool-call":
      return { kind: "tool_call", tool_call_id: event.toolCallId, tool_name: event.toolName, input: event.input, owner: event.owner };
    case "tool-output":
      return {
        kind: "tool_output",
        tool_call_id: event.toolCallId,
        tool_name: event.toolName ?? null,
        text: event.text,
        owner: event.owner,
      };
    case "tool-result":
      return {
        kind: "tool_result",
        tool_call_id: event.toolCallId,
        tool_name: event.toolName ?? null,
        is_error: event.isError,
        text: event.text,
        owner: event.owner,
      };
    case "error":
      return { kind: "error", message: event.message };
  }
}
