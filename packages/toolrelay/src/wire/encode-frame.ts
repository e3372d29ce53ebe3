/**
 * `encodeFrame`: validate an outbound frame against its strict schema, then
 * `JSON.stringify` the frame exactly as given (same field order, same
 * content). The runtime silently drops a frame it does not accept, so a frame
 * it would drop is refused here with `INVALID_FRAME`, naming the path.
 */
import { ToolrelayError } from "../errors.js";
import { formatIssues } from "./format-issues.js";
import { outboundFrameSchemasByType, type OutboundFrame } from "./outbound-frame.js";
import { checkToolCallResponseFrame } from "./tool-call-response-check.js";
import { toolCallResponseText } from "./tool-call-response-text.js";

/** `{ ok: true }`, or the first problems of the frame as `type: path: message`. */
export type OutboundFrameCheck = { ok: true } | { ok: false; error: string };

/** Check a frame against the outbound schemas without encoding it. Never throws. */
export function checkOutboundFrame(frame: unknown): OutboundFrameCheck {
  if (typeof frame !== "object" || frame === null || Array.isArray(frame)) {
    return { ok: false, error: "frame is not an object" };
  }
  const type = (frame as { type?: unknown }).type;
  if (typeof type !== "string") return { ok: false, error: 'frame has no string "type"' };
  if (type === "external_tool_call_response") {
    const problem = checkToolCallResponseFrame(frame);
    return problem === undefined ? { ok: true } : { ok: false, error: `${type}: ${problem}` };
  }
  const schema = outboundFrameSchemasByType.get(type);
  if (schema === undefined) return { ok: false, error: `unknown outbound frame type ${JSON.stringify(type.slice(0, 64))}` };
  const result = schema.safeParse(frame);
  return result.success ? { ok: true } : { ok: false, error: `${type}: ${formatIssues(result.error.issues)}` };
}

/**
 * Validate and serialize one outbound frame (`trusted`: serialize only — for frames the SDK built
 * from parts it already checked).
 * @throws ToolrelayError `INVALID_FRAME` when the frame fails its schema or cannot be serialized.
 */
export function encodeFrame(frame: OutboundFrame, trusted = false): string {
  const check = trusted ? { ok: true as const } : checkOutboundFrame(frame);
  if (!check.ok) {
    throw new ToolrelayError("INVALID_FRAME", `Refusing to send an invalid frame: ${check.error}`, {
      details: { type: typeof frame?.type === "string" ? frame.type : undefined },
    });
  }
  // The SDK's own answers (trusted) are written from their strings; every other frame is stringified.
  if (trusted && frame.type === "external_tool_call_response") return toolCallResponseText(frame);
  let text: string | undefined;
  try {
    text = JSON.stringify(frame);
  } catch (error) {
    throw new ToolrelayError("INVALID_FRAME", `Refusing to send a frame that cannot be serialized: ${frame.type}`, {
      cause: error,
      details: { type: frame.type },
    });
  }
  if (typeof text !== "string") {
    throw new ToolrelayError("INVALID_FRAME", `Refusing to send a frame that serializes to nothing: ${frame.type}`, {
      details: { type: frame.type },
    });
  }
  return text;
}
