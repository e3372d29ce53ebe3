/**
 * The text of an `external_tool_call_response` the SDK built itself: the same text as
 * `JSON.stringify(frame)`, written from the frame's strings without walking its objects (it is the
 * last step of every call). Only for the shapes the SDK builds — `{ type, request_id, error }` and
 * `{ type, request_id, result: { content, is_error? } }` with text and image blocks as
 * `normalizeToolResult` copies them, keys in that order; a property test holds it to
 * `JSON.stringify` for those shapes.
 */
import type { WireContentBlock } from "./content.js";
import type { ExternalToolCallResponseFrame } from "./tool-call-frames.js";

export function toolCallResponseText(frame: ExternalToolCallResponseFrame): string {
  const head = `{"type":"external_tool_call_response","request_id":${JSON.stringify(frame.request_id)}`;
  if ("error" in frame) return `${head},"error":${JSON.stringify(frame.error)}}`;
  const { content, is_error: isError } = frame.result;
  const blocks = content.map(blockText).join(",");
  return `${head},"result":{"content":[${blocks}]${isError === undefined ? "" : `,"is_error":${isError}`}}}`;
}

function blockText(block: WireContentBlock): string {
  if (block.type === "text") return `{"type":"text","text":${JSON.stringify(block.text)}}`;
  return `{"type":"image","data":${JSON.stringify(block.data)},"mimeType":${JSON.stringify(block.mimeType)}}`;
}
