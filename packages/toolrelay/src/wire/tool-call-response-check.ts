/**
 * A hand-written check of `external_tool_call_response`, equivalent to
 * `externalToolCallResponseFrameSchema` (a property test keeps the two in
 * step). It runs on the hot path of every tool result, where it is several
 * times faster than the zod schema and allocates nothing for a valid frame.
 */

const FRAME_KEYS = new Set(["type", "request_id", "result", "error"]);
const RESULT_KEYS = new Set(["content", "is_error"]);
const TEXT_KEYS = new Set(["type", "text"]);
const IMAGE_KEYS = new Set(["type", "data", "mimeType"]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function unknownKey(value: Record<string, unknown>, allowed: ReadonlySet<string>): string | undefined {
  for (const key of Object.keys(value)) if (!allowed.has(key)) return key;
  return undefined;
}

/**
 * The first problem of an `external_tool_call_response` frame as
 * `path: message`, or `undefined` when it is valid.
 */
export function checkToolCallResponseFrame(frame: unknown): string | undefined {
  if (!isObject(frame)) return "(root): Invalid input: expected object";
  if (frame.type !== "external_tool_call_response") return 'type: Invalid input: expected "external_tool_call_response"';
  if (typeof frame.request_id !== "string") return "request_id: Invalid input: expected string";
  const { result, error } = frame;
  if (error !== undefined && typeof error !== "string") return "error: Invalid input: expected string";
  if (result !== undefined) {
    const problem = checkResult(result);
    if (problem !== undefined) return problem;
  }
  const extra = unknownKey(frame, FRAME_KEYS);
  if (extra !== undefined) return `(root): Unrecognized key: ${JSON.stringify(extra)}`;
  if (result !== undefined && error !== undefined) return "error: send either result or error, not both";
  if (result === undefined && error === undefined) return "(root): needs either result or error";
  return undefined;
}

function checkResult(result: unknown): string | undefined {
  if (!isObject(result)) return "result: Invalid input: expected object";
  const { content, is_error: isError } = result;
  if (!Array.isArray(content)) return "result.content: Invalid input: expected array";
  for (let index = 0; index < content.length; index++) {
    const problem = checkBlock(content[index]);
    if (problem !== undefined) return `result.content[${index}]${problem}`;
  }
  if (isError !== undefined && typeof isError !== "boolean") return "result.is_error: Invalid input: expected boolean";
  const extra = unknownKey(result, RESULT_KEYS);
  if (extra !== undefined) return `result: Unrecognized key: ${JSON.stringify(extra)}`;
  return undefined;
}

/** Problem of one content block, as a path suffix plus message. */
function checkBlock(block: unknown): string | undefined {
  if (!isObject(block)) return ": Invalid input: expected object";
  if (block.type === "text") {
    if (typeof block.text !== "string") return ".text: Invalid input: expected string";
    const extra = unknownKey(block, TEXT_KEYS);
    return extra === undefined ? undefined : `: Unrecognized key: ${JSON.stringify(extra)}`;
  }
  if (block.type === "image") {
    if (typeof block.data !== "string") return ".data: Invalid input: expected string";
    if (typeof block.mimeType !== "string") return ".mimeType: Invalid input: expected string";
    const extra = unknownKey(block, IMAGE_KEYS);
    return extra === undefined ? undefined : `: Unrecognized key: ${JSON.stringify(extra)}`;
  }
  return '.type: Invalid input: expected "text" or "image"';
}
