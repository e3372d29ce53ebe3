/**
 * Run one tool callback and turn whatever happens into an outcome: a tool that throws is a result
 * for the model, not an exception for the session. Deadlines and cancellation belong to calls/,
 * which owns the signal in `context`.
 */
import type { WireContentBlock } from "../wire/index.js";
import { clampToolText } from "./clamp-tool-text.js";
import type { ClientTool, ToolCallContext } from "./define-tool.js";
import { errorText, normalizeToolResult } from "./tool-result.js";

/** A call whose callback ran to an end. `message` is the failure as the tool gave it (no marker). */
export type ExecutionOutcome =
  | { kind: "ok"; content: WireContentBlock[] }
  | { kind: "tool-error"; message: string; content: WireContentBlock[] };

/**
 * Call `tool.execute(input, context)` and hand its outcome to `done` exactly once (at once for a
 * synchronous result or throw, after one promise reaction otherwise). Never throws (unless `done`
 * does). A value → `ok` (see `normalizeToolResult`); `{ content, isError: true }`, an `Error` or a
 * value that cannot be sent → `tool-error`, marked `Error: tool <name> reported an error:`; a throw
 * or rejection → `tool-error` with `Error: tool <name> failed: <message>`. The marker keeps a model
 * from mistaking a failure for a result (the runtime's OpenAI-compatible conversion drops `is_error`).
 */
export function executeTool(
  tool: ClientTool,
  input: unknown,
  context: ToolCallContext,
  maxResultChars: number,
  done: (outcome: ExecutionOutcome) => void,
): void {
  const failed = (error: unknown): void => {
    const message = errorText(error);
    done({
      kind: "tool-error",
      message,
      content: [{ type: "text", text: clampToolText(`Error: tool ${tool.name} failed: ${message}`, maxResultChars) }],
    });
  };
  let value: unknown;
  let thenable: boolean;
  try {
    value = tool.execute(input, context);
    thenable = typeof (value as PromiseLike<unknown> | undefined)?.then === "function";
  } catch (error) {
    failed(error);
    return;
  }
  if (!thenable) {
    done(outcomeOf(tool.name, value, maxResultChars));
    return;
  }
  Promise.resolve(value).then((resolved) => done(outcomeOf(tool.name, resolved, maxResultChars)), failed);
}

function outcomeOf(toolName: string, value: unknown, maxResultChars: number): ExecutionOutcome {
  const normalized = normalizeToolResult(value, { maxTextChars: maxResultChars });
  if (!normalized.isError) return { kind: "ok", content: normalized.content };
  const texts = normalized.content.flatMap((block) => (block.type === "text" ? [block.text] : []));
  const message = texts.length > 0 ? texts.join("\n") : "(the tool reported an error without text)";
  const marker = `Error: tool ${toolName} reported an error: `;
  const [first, ...rest] = normalized.content;
  const content: WireContentBlock[] =
    first?.type === "text"
      ? [{ type: "text", text: clampToolText(marker + first.text, maxResultChars) }, ...rest]
      : [{ type: "text", text: marker.trimEnd() }, ...normalized.content];
  return { kind: "tool-error", message, content };
}
