/**
 * Run one tool callback and turn whatever happens into an outcome. A tool that
 * throws is a result for the model, not an exception for the session, so the
 * returned promise never rejects. Deadlines and cancellation belong to the
 * calls/ layer, which owns the signal in `context`.
 */
import type { WireContentBlock } from "../wire/index.js";
import { DEFAULT_MAX_RESULT_CHARS, clampToolText, validateMaxChars } from "./clamp-tool-text.js";
import type { ClientTool, ToolCallContext } from "./define-tool.js";
import { errorText, normalizeToolResult } from "./tool-result.js";

/** A call whose callback ran to an end. */
export type ExecutionOutcome =
  | { kind: "ok"; content: WireContentBlock[] }
  | { kind: "tool-error"; message: string; content: WireContentBlock[] };

export interface ExecuteToolOptions {
  /** Text results (and error messages) are clamped to this many characters. Default 32_000 (the runtime's own clamp). */
  maxResultChars?: number;
}

/**
 * Call `tool.execute(parsedInput, context)` and normalize its result.
 *
 * - returned value → `ok` with its content (see `normalizeToolResult`);
 * - a returned `{ content, isError: true }`, a returned `Error`, or a value
 *   that cannot be sent → `tool-error` with that content, `message` being its text;
 * - a synchronous throw, a rejected promise, a thrown non-`Error` value →
 *   `tool-error`: `message` is the error's `message` (a thrown string as is,
 *   other values as JSON or `String(value)`), `content` one text block with it.
 *
 * The promise never rejects. Throws synchronously only for an invalid
 * `maxResultChars` (`ToolrelayError("INVALID_OPTIONS")`).
 */
export function executeTool(
  tool: ClientTool,
  parsedInput: unknown,
  context: ToolCallContext,
  options: ExecuteToolOptions = {},
): Promise<ExecutionOutcome> {
  const maxResultChars = options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
  validateMaxChars(maxResultChars, "maxResultChars");
  return run(tool, parsedInput, context, maxResultChars);
}

async function run(tool: ClientTool, parsedInput: unknown, context: ToolCallContext, maxResultChars: number): Promise<ExecutionOutcome> {
  let value: unknown;
  try {
    value = await tool.execute(parsedInput, context);
  } catch (error) {
    const message = clampToolText(errorText(error), maxResultChars);
    return { kind: "tool-error", message, content: [{ type: "text", text: message }] };
  }
  const normalized = normalizeToolResult(value, { maxTextChars: maxResultChars });
  if (!normalized.isError) return { kind: "ok", content: normalized.content };
  return { kind: "tool-error", message: contentText(normalized.content), content: normalized.content };
}

/** The text blocks joined with `"\n"` (what the runtime shows without images). */
function contentText(content: readonly WireContentBlock[]): string {
  const texts = content.flatMap((block) => (block.type === "text" ? [block.text] : []));
  return texts.length > 0 ? texts.join("\n") : "(tool reported an error without text)";
}
