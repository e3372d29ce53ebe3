import type { StreamDelta } from "../wire/index.js";

/** Who executes a tool: the caller's process (`client`) or the runtime (`runtime`: Bash, Read, ...). */
export type ToolOwner = "client" | "runtime";

/** What a turn yields, in the order the runtime produced it. */
export type TurnEvent =
  /** A piece of the assistant's answer (streamed; concatenate `text` per `messageId`). */
  | { type: "assistant"; text: string; messageId: string | undefined }
  /** A piece of the model's reasoning. */
  | { type: "reasoning"; text: string; messageId: string | undefined }
  /** The model called a tool. */
  | { type: "tool-call"; toolCallId: string; toolName: string; input: unknown; owner: ToolOwner }
  /** A tool's result, as the model receives it. */
  | { type: "tool-result"; toolCallId: string; toolName: string | undefined; isError: boolean; text: string; owner: ToolOwner }
  /** An error reported by the runtime during the turn. */
  | { type: "error"; message: string }
  /** The turn ended. Always the last event. */
  | { type: "stop"; stopReason: string };

/** Render letta message content (a string or text parts) as plain text. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : ""))
      .join("");
  }
  return "";
}

function parseArguments(raw: unknown): unknown {
  if (typeof raw !== "string") return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

interface ToolCallShape {
  name?: unknown;
  arguments?: unknown;
  tool_call_id?: unknown;
  id?: unknown;
}

function toolCallsOf(delta: Record<string, unknown>): ToolCallShape[] {
  const calls: ToolCallShape[] = [];
  if (Array.isArray(delta.tool_calls)) calls.push(...(delta.tool_calls as ToolCallShape[]));
  else if (delta.tool_call && typeof delta.tool_call === "object") calls.push(delta.tool_call as ToolCallShape);
  return calls;
}

/**
 * Turn one `stream_delta` into turn events. `isClientTool` tells which tool
 * names belong to the session. Deltas that carry nothing for the caller
 * (client_tool_start, status, ...) yield no event.
 */
export function eventsFromDelta(
  delta: StreamDelta,
  isClientTool: (name: string) => boolean,
  toolNameOf: (toolCallId: string) => string | undefined = () => undefined,
): TurnEvent[] {
  const fields = delta as unknown as Record<string, unknown>;
  const messageId = typeof fields.id === "string" ? fields.id : undefined;
  switch (fields.message_type) {
    case "assistant_message": {
      const text = contentText(fields.content);
      return text ? [{ type: "assistant", text, messageId }] : [];
    }
    case "reasoning_message": {
      const text = typeof fields.reasoning === "string" ? fields.reasoning : contentText(fields.content);
      return text ? [{ type: "reasoning", text, messageId }] : [];
    }
    case "tool_call_message":
    case "approval_request_message":
      return toolCallsOf(fields).flatMap((call): TurnEvent[] => {
        const toolCallId = typeof call.tool_call_id === "string" ? call.tool_call_id : typeof call.id === "string" ? call.id : undefined;
        if (typeof call.name !== "string" || toolCallId === undefined) return [];
        return [
          {
            type: "tool-call",
            toolCallId,
            toolName: call.name,
            input: parseArguments(call.arguments),
            owner: isClientTool(call.name) ? "client" : "runtime",
          },
        ];
      });
    case "tool_return_message": {
      const toolCallId = typeof fields.tool_call_id === "string" ? fields.tool_call_id : "";
      // The runtime's tool_return_message carries no tool name: take it from the call.
      const toolName = typeof fields.name === "string" ? fields.name : toolNameOf(toolCallId);
      const text = typeof fields.tool_return === "string" ? fields.tool_return : contentText(fields.tool_return);
      return [
        {
          type: "tool-result",
          toolCallId,
          toolName,
          isError: fields.status === "error",
          text,
          owner: toolName !== undefined && isClientTool(toolName) ? "client" : "runtime",
        },
      ];
    }
    case "error_message":
    case "loop_error": {
      const message = typeof fields.message === "string" ? fields.message : contentText(fields.content) || "runtime error";
      return [{ type: "error", message }];
    }
    default:
      return [];
  }
}
