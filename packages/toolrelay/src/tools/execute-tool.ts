/**
 * Run one tool callback and turn whatever happens into an outcome: a tool that throws is a result
 * for the model, not an exception for the session. Deadlines and cancellation belong to calls/,
 * which owns the signal in `context`.
 */
import type { WireContentBlock } from "../wire/index.js";
import { clampToolText } from "./clamp-tool-text.js";
import type { ClientTool, ToolCallContext, ToolModelOutputCall } from "./define-tool.js";
import type { InputValidation } from "./input-issues.js";
import { errorText, normalizeToolResult } from "./tool-result.js";

/**
 * A call whose callback ran to an end. `message` is the failure as the tool gave it (no marker).
 * `output` (ok only) is what the app reads: the value `execute` returned, checked by the tool's
 * `outputSchema` when it has one (the schema's output); the model got `content`.
 */
export type ExecutionOutcome =
  | { kind: "ok"; content: WireContentBlock[]; output?: unknown }
  | { kind: "tool-error"; message: string; content: WireContentBlock[] };

/**
 * Call `tool.execute(input, context)` and hand `token` and the outcome to `done` exactly once (at
 * once for a synchronous result or throw, after one promise reaction otherwise; the token comes
 * back so that a caller needs no closure per call). Never throws (unless `done` does). A value → `ok`
 * (see `normalizeToolResult`); `{ content, isError: true }`, an `Error` or a value that cannot be
 * sent → `tool-error`, marked `Error: tool <name> reported an error:`; a throw or rejection →
 * `tool-error` with `Error: tool <name> failed: <message>`. The marker keeps a model from mistaking
 * a failure for a result (the runtime's OpenAI-compatible conversion drops `is_error`). With an
 * `outputSchema`, a value that does not match it is a `tool-error` naming the failing paths; with
 * `toModelOutput`, the model gets what it returns for the (checked) value and the call (`{ toolCallId, input }`).
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
    thenable = isThenable(value);
  } catch (error) {
    return void done(token, failureOf(tool.name, error, maxResultChars));
  }
  const shaped = tool.validateOutput !== undefined || tool.toModelOutput !== undefined;
  if (!thenable && !shaped) return void done(token, outcomeOf(tool.name, value, value, maxResultChars));
  const finish = shaped
    ? (resolved: unknown) =>
        shapeOutput(tool, resolved, { toolCallId: context.toolCallId, input }, maxResultChars, (outcome) => done(token, outcome))
    : (resolved: unknown) => done(token, outcomeOf(tool.name, resolved, resolved, maxResultChars));
  if (!thenable) return void finish(value);
  Promise.resolve(value).then(finish, (error: unknown) => done(token, failureOf(tool.name, error, maxResultChars)));
}

/** Check `value` against the tool's `outputSchema` and map it with `toModelOutput`; an error result or an `Error` is passed on unchecked. */
function shapeOutput(
  tool: ClientTool,
  value: unknown,
  call: ToolModelOutputCall,
  maxResultChars: number,
  done: (outcome: ExecutionOutcome) => void,
): void {
  if (value instanceof Error || isErrorResult(value)) return void done(outcomeOf(tool.name, value, undefined, maxResultChars));
  const toModel = (output: unknown): void => {
    if (tool.toModelOutput === undefined) return void done(outcomeOf(tool.name, output, output, maxResultChars));
    let modelValue: unknown;
    try {
      modelValue = tool.toModelOutput(output, call);
    } catch (error) {
      return void done(failureOf(tool.name, new Error(`toModelOutput failed: ${errorText(error)}`), maxResultChars));
    }
    if (!isThenable(modelValue)) return void done(outcomeOf(tool.name, modelValue, output, maxResultChars));
    Promise.resolve(modelValue).then(
      (resolved) => done(outcomeOf(tool.name, resolved, output, maxResultChars)),
      (error: unknown) => done(failureOf(tool.name, new Error(`toModelOutput failed: ${errorText(error)}`), maxResultChars)),
    );
  };
  if (tool.validateOutput === undefined) return void toModel(value);
  const checked = (validation: InputValidation): void => {
    if (validation.ok) return void toModel(validation.value);
    const issues = validation.issues.map((issue) => `- ${issue.path}: ${issue.message}`).join("\n");
    const message = `the result does not match the tool's outputSchema:\n${issues}`;
    done({
      kind: "tool-error",
      message,
      content: [{ type: "text", text: clampToolText(`Error: tool ${tool.name} failed: ${message}`, maxResultChars) }],
    });
  };
  const validation = tool.validateOutput(value);
  if (!(validation instanceof Promise)) return void checked(validation);
  validation.then(checked, (error: unknown) =>
    checked({ ok: false, issues: [{ path: "(root)", message: `the output schema failed: ${errorText(error)}` }] }),
  );
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === "function";
}

/** `{ content: [...], isError: true }`: the tool reported a failure itself. */
function isErrorResult(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { isError?: unknown }).isError === true &&
    Array.isArray((value as { content?: unknown }).content)
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

function outcomeOf(toolName: string, value: unknown, output: unknown, maxResultChars: number): ExecutionOutcome {
  const normalized = normalizeToolResult(value, { maxTextChars: maxResultChars });
  if (!normalized.isError)
    return output === undefined ? { kind: "ok", content: normalized.content } : { kind: "ok", content: normalized.content, output };
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
