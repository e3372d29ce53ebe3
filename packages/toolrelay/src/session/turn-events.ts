import type { StreamDelta, ToolCallResponseBody } from "../wire/index.js";
import { toolReturnsOf, toolReturnText } from "../wire/tool-returns.js";
import { clientToolResultText } from "./client-tool-result-text.js";
import { type RuntimeError, runtimeErrorFromDelta } from "./runtime-error.js";

/** Who executes a tool: the caller's process (`client`) or the runtime (`runtime`: Bash, Read, ...). */
export type ToolOwner = "client" | "runtime";

/**
 * What the model (the turn's own, or a subagent's) streamed: text, reasoning,
 * tool calls, tool output and results, errors. A subagent's events come
 * wrapped in a {@link TurnEvent} of type `subagent`.
 */
export type StreamEvent =
  /** A piece of the assistant's answer (streamed; concatenate `text` per `messageId`). */
  | { type: "assistant"; text: string; messageId: string | undefined }
  /** A piece of the model's reasoning. */
  | { type: "reasoning"; text: string; messageId: string | undefined }
  /** The model called a tool. */
  | { type: "tool-call"; toolCallId: string; toolName: string; input: unknown; owner: ToolOwner }
  /**
   * What a running runtime tool (Bash, ...) has printed so far: `text` is the whole output up to
   * now, not a piece. Zero or more per call, always before the call's one `tool-result`.
   */
  | { type: "tool-output"; toolCallId: string; toolName: string | undefined; text: string; owner: ToolOwner }
  /**
   * A tool's result, as the model receives it. Exactly one per tool call. For a client tool, `text`
   * is what the SDK sent the model (an image as `[image: image/png, 1,234 bytes]`), not the
   * runtime's copy of it, which it cuts to 30,000 characters (docs/tools.md).
   */
  | { type: "tool-result"; toolCallId: string; toolName: string | undefined; isError: boolean; text: string; owner: ToolOwner }
  /**
   * An error reported by the runtime: one per failure (the runtime reports a failed run several
   * ways; the turn keeps one). `message` is readable text, never a JSON document; the runtime's
   * error class, detail and run are in their own fields (see {@link RuntimeError}).
   */
  | ({ type: "error" } & RuntimeError);

/** What a turn yields, in the order the runtime produced it. */
export type TurnEvent =
  | StreamEvent
  /**
   * Something a subagent (started by the model, e.g. with the runtime's `Agent` tool) streamed.
   * It is never part of the turn's own text, tool calls, errors or stop reason; its tool calls
   * run in the subagent, never as this session's client tools (`owner` is always `runtime`).
   */
  | { type: "subagent"; subagentId: string; event: StreamEvent }
  /** The turn ended. Always the last event. */
  | { type: "stop"; stopReason: string };

/**
 * The id prefix of the runtime's streamed snapshots of a running tool's output
 * (Letta Code 0.32: `synthetic-tool-return-stream-<tool_call_id>`). The final
 * `tool_return_message` of the call has another id.
 */
export const TOOL_OUTPUT_SNAPSHOT_ID_PREFIX = "synthetic-tool-return-stream-";

/** Render letta message content (a string or text parts) as plain text. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : "",
      )
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
 * Turn one `stream_delta` into stream events. `isClientTool` tells which tool
 * names belong to the session. Deltas that carry nothing for the caller
 * (client_tool_start, status, stop_reason, ...) yield no event. A
 * `tool_return_message` gives one event per result it carries (its top-level
 * result, or each usable `tool_returns` entry: docs/protocol.md#stream_delta):
 * `tool-output` when its id marks it as a streamed snapshot, `tool-result`
 * otherwise (the turn keeps only the first per call). `sentResponse` gives the
 * response the SDK wrote for a client tool call: the `tool-result` of that call
 * reports it as the model got it (see `client-tool-result-text.ts`).
 */
export function eventsFromDelta(
  delta: StreamDelta,
  isClientTool: (name: string) => boolean,
  toolNameOf: (toolCallId: string) => string | undefined = () => undefined,
  sentResponse: (toolCallId: string) => ToolCallResponseBody | undefined = () => undefined,
): StreamEvent[] {
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
      return toolCallsOf(fields).flatMap((call): StreamEvent[] => {
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
      // One event per result: a backend-streamed delta may carry several (docs/protocol.md#stream_delta).
      const { entries } = toolReturnsOf(fields);
      const snapshot = messageId?.startsWith(TOOL_OUTPUT_SNAPSHOT_ID_PREFIX) === true;
      return entries.map(({ toolCallId, status, toolReturn }): StreamEvent => {
        // The runtime's tool_return_message rarely names the tool: take it from the call. A delta-level
        // `name` is trusted only when the delta carries one result.
        const toolName = typeof fields.name === "string" && entries.length === 1 ? fields.name : toolNameOf(toolCallId);
        const text = toolReturnText(toolReturn);
        const owner: ToolOwner = toolName !== undefined && isClientTool(toolName) ? "client" : "runtime";
        if (snapshot) return { type: "tool-output", toolCallId, toolName, text, owner };
        const isError = status === "error";
        const shown = owner === "client" ? clientToolResultText(sentResponse(toolCallId), text, isError) : text;
        return { type: "tool-result", toolCallId, toolName, isError, text: shown, owner };
      });
    }
    case "error_message":
    case "loop_error":
      return [{ type: "error", ...runtimeErrorFromDelta(fields, contentText(fields.content) || "runtime error") }];
    default:
      return [];
  }
}
