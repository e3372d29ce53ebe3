/**
 * How the runtime turns an `external_tool_call_response` into the tool return
 * the model sees (docs/protocol.md#external_tool_call_response,
 * docs/protocol.md#clamping, docs/protocol.md#error-texts): text parts joined with "\n",
 * images kept, other parts dropped, an all-empty result becomes the JSON of
 * the raw parts, text clamped to 32,000 characters, failures wrapped in
 * "External tool execution error: ...".
 */
import { RUNTIME_TOOL_RETURN_MAX_CHARS } from "../internal/runtime-limits.js";
import type { ScriptedContentBlock, ScriptedToolResult } from "./scripted-runtime-types.js";

/** `TOOL_RETURN_MAX_CHARS` of the real runtime. */
export const TOOL_RETURN_MAX_CHARS = RUNTIME_TOOL_RETURN_MAX_CHARS;

/** The message prefix the real runtime puts before a thrown/failed external call. */
export const EXTERNAL_ERROR_PREFIX = "External tool execution error: ";

const formatCount = (value: number): string => value.toLocaleString("en-US");

/** Middle truncation with the real runtime's notices (no overflow file is written). */
export function clampToolReturnText(text: string, maxChars = TOOL_RETURN_MAX_CHARS): string {
  if (text.length <= maxChars) return text;
  const half = Math.floor(maxChars / 2);
  const omitted = text.length - maxChars;
  const truncated = `${text.slice(0, half)}\n... [${formatCount(omitted)} characters omitted] ...\n${text.slice(-half)}`;
  return `${truncated}\n\n[Output truncated: showing ${formatCount(maxChars)} of ${formatCount(text.length)} characters.]`;
}

/** The model-facing text of a result's content (images are shown as `[image <mimeType>]`). */
export function toolReturnFromContent(content: readonly unknown[]): string {
  const texts: string[] = [];
  const parts: Array<{ text: string } | { image: string }> = [];
  for (const part of content) {
    if (typeof part !== "object" || part === null) continue;
    const block = part as Record<string, unknown>;
    if (block.type === "text" && typeof block.text === "string") {
      texts.push(block.text);
      parts.push({ text: block.text });
    } else if (block.type === "image" && typeof block.data === "string" && typeof block.mimeType === "string") {
      parts.push({ image: block.mimeType });
    }
  }
  if (parts.length > texts.length) {
    // Multimodal: each text block is clamped on its own, images pass through.
    return parts.map((part) => ("text" in part ? clampToolReturnText(part.text) : `[image ${part.image}]`)).join("\n");
  }
  const joined = texts.join("\n");
  return joined ? clampToolReturnText(joined) : JSON.stringify(content);
}

/** A result from an `external_tool_call_response.result`. */
export function resultFromContent(content: ScriptedContentBlock[], isError: boolean): ScriptedToolResult {
  return { content, isError, toolReturn: toolReturnFromContent(content) };
}

/** A failed call (client `error`, timeout, lost connection, ...): wrapped like the real runtime wraps it. */
export function externalFailure(message: string): ScriptedToolResult {
  return { content: [], isError: true, error: message, toolReturn: `${EXTERNAL_ERROR_PREFIX}${message}` };
}

/** A failure the model sees as is (unknown tool, denial, interruption). */
export function plainFailure(message: string): ScriptedToolResult {
  return { content: [], isError: true, error: message, toolReturn: message };
}
