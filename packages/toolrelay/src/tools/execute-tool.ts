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
 * Call `tool.execute(input, context)` and hand `token` and the outcome to `done` exactly once (at
 * once for a synchronous result or throw, after one promise reaction otherwise; the token comes
 * back so that a caller needs no closure per call). Never throws (unless `done` does). A value → `ok`
 * (see `normalizeToolResult`); `{ content, isError: true }`, an `Error` or a value that cannot be
 * sent → `tool-error`, marked `Error: tool <name> reported an error:`; a throw or rejection →
 * `tool-error` with `Error: tool <name> failed: <message>`. The marker keeps a model from mistaking
 * a failure for a result (the runtime's OpenAI-compatible conversion drops `is_error`).
 */
export function executeTool<Token>(
  tool: ClientTool,
  input: unknown,
  context: ToolCallContext,
  maxResultChars: number,
  done: (token: Token, outcome: ExecutionOutcome) => void,
  token: Token,
): void {
  let value: unknown;
  let thenable: boolean;
  try {
    value = tool.execute(input, context);
    thenable = typeof (value as PromiseLike<unknown> | undefined)?.then === "function";
  } catch (error) {
    return void done(token, failureOf(tool.name, error, maxResultChars));
  }
  if (!thenable) return void done(token, outcomeOf(tool.name, value, maxResultChars));
  Promise.resolve(value).then(
    (resolved) => done(token, outcomeOf(tool.name, resolved, maxResultChars)),
    (error: unknown) => done(token, failureOf(tool.name, error, maxResultChars)),
  );
}

function failureOf(toolName: string, error: unknown, maxResultChars: number): ExecutionOutcome {
  const message = errorText(error);
  return {
    kind: "tool-error",
    message,
    content: [{ type: "text", text: clampToolText(`Error: tool ${toolName} failed: ${message}`, maxResultChars) }],
  };
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
