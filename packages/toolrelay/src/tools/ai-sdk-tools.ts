/**
 * Vercel AI SDK tools (`tool({ description, inputSchema, execute })` from
 * `ai`) as client tools, through one function. The `ai` package is not
 * needed at run time: this reads the tool objects as they are.
 *
 * - `inputSchema` may be a zod schema, a Standard Schema, a lazy schema, or
 *   the AI SDK's `jsonSchema(...)` (its `validate`, when given, is the
 *   validator; without one the schema only advertises, as in the AI SDK).
 * - `execute(input, { toolCallId, abortSignal, messages })` gets the call's
 *   id and signal; `messages` is `[]` (the runtime keeps the conversation).
 *   A streaming `execute` (an async iterable) returns its last value.
 * - `needsApproval` (`true`, or `needsApproval(input, { toolCallId, messages: [] })`)
 *   becomes `defineTool`'s: the session's `canUseTool` answers each call that needs it.
 * - `outputSchema` becomes `defineTool`'s: each return value is checked against it (the same
 *   kinds as `inputSchema`; a `jsonSchema(...)` without `validate` checks nothing, as in the AI SDK).
 * - `toModelOutput({ toolCallId, input, output })` becomes `defineTool`'s: the model reads what it
 *   maps the output to (`text`, `json`, `error-text`, `error-json`, `content` with text and
 *   images), while the app's `output` (`tool-call-end`, the turn's `toolOutputs`) is the value
 *   `execute` returned.
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { ToolrelayError } from "../errors.js";
import type { WireContentBlock } from "../wire/index.js";
import { defineTool, type ClientTool, type NeedsApproval, type ToolAnnotations } from "./define-tool.js";
import type { JsonSchemaObject, ToolInputSchema } from "./tool-input-schema.js";
import { isZodSchema } from "./tool-input-schema.js";
import type { ToolOutputSchema } from "./tool-output-schema.js";
import { isStandardSchema } from "./standard-schema-input.js";
import type { ToolResult, ToolReturnValue } from "./tool-result.js";

/** The parts of an AI SDK tool this adapter reads. */
export interface AiSdkToolLike {
  description?: string | undefined;
  title?: string | undefined;
  inputSchema: unknown;
  /**
   * A function, called as `execute(input, { toolCallId, messages: [], abortSignal })`. Typed
   * `unknown` on purpose: a function type here would be the contextual type of `tool({...})`
   * and make TypeScript infer the tool's output as `unknown` (its `toModelOutput` would lose it).
   */
  execute?: unknown;
  /** `true` / `false`, or called as `needsApproval(input, { toolCallId, messages: [] })` before each call runs. */
  needsApproval?: boolean | ((input: never, options: never) => unknown) | undefined;
  /** The schema of `execute`'s return value (zod, a Standard Schema, `jsonSchema(...)`, or a lazy one). */
  outputSchema?: unknown;
  /** Called as `toModelOutput({ toolCallId, input, output })`. */
  toModelOutput?: ((options: never) => unknown) | undefined;
}

/**
 * What an AI SDK tool's `execute` returns: its promise's value, or a streaming execute's items;
 * `unknown` when that is not known (no typed `execute`, or `any`).
 */
export type AiSdkToolOutputOf<TTool> = [ExecuteOutput<TTool>] extends [never]
  ? unknown
  : 0 extends 1 & ExecuteOutput<TTool>
    ? unknown
    : ExecuteOutput<TTool>;

/** Per variant of the tool's type (the AI SDK's `Tool` is a union: with `execute`, or with `outputSchema` only). */
type ExecuteOutput<TTool> = TTool extends { execute: (...args: never[]) => infer TReturn } ? Unwrapped<TReturn> : never;

type Unwrapped<TReturn> = TReturn extends AsyncIterable<infer TItem> ? TItem : TReturn extends PromiseLike<infer TValue> ? TValue : TReturn;

/** The client tools {@link fromAiSdkTools} makes of `TTools`: each named by its key and typed by its `execute`'s output. */
export type AiSdkClientToolOf<TTools> = {
  [TName in keyof TTools & string]: ClientTool<ToolInputSchema, AiSdkToolOutputOf<TTools[TName]>, TName>;
}[keyof TTools & string];

/** Options of {@link fromAiSdkTools}. */
export interface FromAiSdkToolsOptions {
  /** Annotations per tool name (the AI SDK has none; they decide the timeout text). Default: none. */
  annotations?: Readonly<Record<string, ToolAnnotations>> | undefined;
  /** Deadline of each call, in ms (1–300_000). Default: the session's `toolTimeoutMs`. */
  timeoutMs?: number | undefined;
  /**
   * Per tool name, `true` to let that tool replace the runtime's own tool of the same name
   * (`defineTool`'s `overridesRuntimeTool`). Default: none (such a name is `RESERVED_TOOL_NAME`).
   */
  overridesRuntimeTool?: Readonly<Record<string, boolean>> | undefined;
}

const aiSchemaSymbol = Symbol.for("vercel.ai.schema");

type AiExecute = (input: unknown, options: { toolCallId: string; messages: unknown[]; abortSignal: AbortSignal }) => unknown;
type AiNeedsApproval = (input: unknown, options: { toolCallId: string; messages: unknown[] }) => boolean | PromiseLike<boolean>;
type AiToModelOutput = (options: { toolCallId: string; input: unknown; output: unknown }) => unknown;

/**
 * `{ name: tool({...}) }` → client tools named by their keys. Throws
 * `ToolrelayError("INVALID_TOOL_DEFINITION")` naming the tool for a tool without `execute`
 * (an AI SDK client-side tool: nothing to run here), a schema whose JSON
 * Schema is a promise (resolve it first), a `needsApproval` that is neither a boolean nor a
 * function, an `outputSchema` that is no schema, or anything `defineTool` refuses. A tool with
 * `needsApproval` asks the session's `canUseTool` (`kind: "client-tool"`) before each call it
 * says so for; `createSession` refuses such tools without a `canUseTool`.
 */
export function fromAiSdkTools<TTools extends Readonly<Record<string, AiSdkToolLike>>>(
  tools: TTools,
  options: FromAiSdkToolsOptions = {},
): Array<AiSdkClientToolOf<TTools>> {
  if (typeof tools !== "object" || tools === null)
    throw new ToolrelayError("INVALID_OPTIONS", "fromAiSdkTools() needs an object of AI SDK tools by name");
  return Object.entries(tools).map(([name, tool]) => fromAiSdkTool(name, tool, options)) as Array<AiSdkClientToolOf<TTools>>;
}

function fromAiSdkTool(name: string, tool: AiSdkToolLike, options: FromAiSdkToolsOptions): ClientTool {
  const fail = (message: string) => new ToolrelayError("INVALID_TOOL_DEFINITION", `AI SDK tool "${name}": ${message}`);
  if (typeof tool !== "object" || tool === null) throw fail("is not a tool object");
  const run = tool.execute as AiExecute | undefined;
  if (typeof run !== "function") throw fail("has no execute function (an AI SDK client-side tool cannot run here)");
  const toModelOutput = tool.toModelOutput as AiToModelOutput | undefined;
  if (toModelOutput !== undefined && typeof toModelOutput !== "function")
    throw fail(`toModelOutput must be a function ({ toolCallId, input, output }), got ${typeof toModelOutput}`);
  const schema = inputSchemaOf(tool.inputSchema, fail);
  const outputSchema = outputSchemaOf(tool.outputSchema, fail);
  const needsApproval = needsApprovalOf(tool.needsApproval, fail);
  return defineTool({
    name,
    description: tool.description ?? tool.title ?? "",
    ...schema,
    ...(options.annotations?.[name] ? { annotations: options.annotations[name] } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.overridesRuntimeTool && Object.hasOwn(options.overridesRuntimeTool, name)
      ? { overridesRuntimeTool: options.overridesRuntimeTool[name] }
      : {}),
    ...(needsApproval !== undefined ? { needsApproval } : {}),
    ...(outputSchema !== undefined ? { outputSchema } : {}),
    ...(toModelOutput !== undefined
      ? {
          toModelOutput: async (output: unknown, { toolCallId, input }: { toolCallId: string; input: unknown }) =>
            modelOutput(await toModelOutput({ toolCallId, input, output })) as ToolReturnValue,
        }
      : {}),
    execute: (input: unknown, { signal, toolCallId }: { signal: AbortSignal; toolCallId: string }) =>
      lastValue(run(input, { toolCallId, messages: [], abortSignal: signal })),
  } as Parameters<typeof defineTool<ToolInputSchema>>[0]);
}

/**
 * The AI SDK's `needsApproval` as `defineTool`'s: a function gets `{ toolCallId, messages: [] }`
 * (the runtime keeps the conversation), and its answer is read as the AI SDK reads it (truthy:
 * ask), so an untyped function that answers `"yes"` or `1` asks rather than runs.
 */
function needsApprovalOf(value: unknown, fail: (message: string) => ToolrelayError): NeedsApproval<unknown> | undefined {
  if (value === undefined || typeof value === "boolean") return value;
  if (typeof value !== "function")
    throw fail(`needsApproval must be a boolean or a function (input, { toolCallId, messages }), got ${describe(value)}`);
  const ask = value as AiNeedsApproval;
  return (input, { toolCallId }) => {
    const answer: unknown = ask(input, { toolCallId, messages: [] });
    return typeof (answer as PromiseLike<unknown> | null)?.then === "function" ? Promise.resolve(answer).then(Boolean) : Boolean(answer);
  };
}

/** The AI SDK's `outputSchema` as `defineTool`'s; `undefined` when there is none, or it only describes (`jsonSchema(...)` without `validate`). */
function outputSchemaOf(value: unknown, fail: (message: string) => ToolrelayError): ToolOutputSchema | undefined {
  if (value === undefined) return undefined;
  const schema = typeof value === "function" ? (value as () => unknown)() : value;
  if (isZodSchema(schema) || (isStandardSchema(schema) && !isAiSchema(schema))) return schema as ToolOutputSchema;
  if (!isAiSchema(schema)) throw fail("outputSchema must be a zod schema, a Standard Schema or the AI SDK's jsonSchema(...)");
  const validate = (schema as { validate?: AiValidate | undefined }).validate;
  return typeof validate === "function" ? standardOf(validate) : undefined;
}

type SchemaParts = { inputSchema: ToolInputSchema; jsonSchema?: JsonSchemaObject | undefined; validate?: boolean | undefined };

function inputSchemaOf(value: unknown, fail: (message: string) => ToolrelayError): SchemaParts {
  const schema = typeof value === "function" ? (value as () => unknown)() : value;
  if (isZodSchema(schema) || (isStandardSchema(schema) && !isAiSchema(schema))) return { inputSchema: schema as ToolInputSchema };
  if (!isAiSchema(schema)) throw fail("inputSchema must be a zod schema, a Standard Schema or the AI SDK's jsonSchema(...)");
  const json = (schema as { jsonSchema: unknown }).jsonSchema;
  if (typeof (json as { then?: unknown } | null)?.then === "function")
    throw fail("its JSON Schema is a promise: resolve it and pass the object");
  const validate = (schema as { validate?: AiValidate | undefined }).validate;
  if (typeof validate !== "function") return { inputSchema: json as JsonSchemaObject, validate: false };
  return { inputSchema: standardOf(validate), jsonSchema: json as JsonSchemaObject };
}

type AiValidation = { success: true; value: unknown } | { success: false; error: unknown };
type AiValidate = (value: unknown) => AiValidation | PromiseLike<AiValidation>;

/** An AI SDK schema's `validate` as a Standard Schema. */
function standardOf(validate: AiValidate): StandardSchemaV1 {
  return {
    "~standard": {
      version: 1,
      vendor: "ai-sdk",
      validate: (input) => {
        const result = validate(input);
        return typeof (result as PromiseLike<AiValidation>).then === "function"
          ? Promise.resolve(result).then(asStandard)
          : asStandard(result as AiValidation);
      },
    },
  };
}

function asStandard(result: AiValidation): StandardSchemaV1.Result<unknown> {
  if (result.success) return { value: result.value };
  const message = result.error instanceof Error ? result.error.message : String(result.error);
  return { issues: [{ message }] };
}

function isAiSchema(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[aiSchemaSymbol] === true;
}

async function lastValue(value: unknown): Promise<unknown> {
  const resolved = await value;
  if (typeof resolved !== "object" || resolved === null || typeof (resolved as AsyncIterable<unknown>)[Symbol.asyncIterator] !== "function")
    return resolved;
  let last: unknown;
  for await (const item of resolved as AsyncIterable<unknown>) last = item;
  return last;
}

/** The AI SDK's `ToolResultOutput` as a toolrelay result. */
function modelOutput(output: unknown): ToolResult | ToolReturnValue {
  const { type, value } = (output ?? {}) as { type?: unknown; value?: unknown; reason?: unknown };
  switch (type) {
    case "text":
      return String(value);
    case "json":
      return value as ToolReturnValue;
    case "error-text":
      return errorOutput(String(value));
    case "error-json":
      return errorOutput(JSON.stringify(value, null, 2) ?? String(value));
    case "execution-denied":
      return errorOutput(
        `Execution denied${(output as { reason?: unknown }).reason ? `: ${String((output as { reason?: unknown }).reason)}` : "."}`,
      );
    case "content": {
      const result: ToolResult = { content: (Array.isArray(value) ? value : []).map(contentPart) };
      return result;
    }
    default:
      return output as ToolReturnValue;
  }
}

function describe(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "string" ? JSON.stringify(value) : typeof value;
}

function errorOutput(text: string): ToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

function contentPart(part: { type?: unknown; text?: unknown; data?: unknown; mediaType?: unknown }): WireContentBlock {
  if (part.type === "text") return { type: "text", text: String(part.text) };
  const mediaType = typeof part.mediaType === "string" ? part.mediaType : "";
  if ((part.type === "media" || part.type === "image-data") && mediaType.startsWith("image/") && typeof part.data === "string") {
    return { type: "image", data: part.data, mimeType: mediaType };
  }
  return { type: "text", text: `[${String(part.type)} content${mediaType ? ` (${mediaType})` : ""}: not sent]` };
}
