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
 *   A streaming `execute` (an async iterable) sends its last value.
 * - `toModelOutput`, when the tool has one, shapes what the model reads
 *   (`text`, `json`, `error-text`, `error-json`, `content` with text and images).
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { ToolrelayError } from "../errors.js";
import type { WireContentBlock } from "../wire/index.js";
import { defineTool, type ClientTool, type ToolAnnotations } from "./define-tool.js";
import type { JsonSchemaObject, ToolInputSchema } from "./tool-input-schema.js";
import { isZodSchema } from "./tool-input-schema.js";
import { isStandardSchema } from "./standard-schema-input.js";
import type { ToolResult, ToolReturnValue } from "./tool-result.js";

/** The parts of an AI SDK tool this adapter reads. */
export interface AiSdkToolLike {
  description?: string | undefined;
  title?: string | undefined;
  inputSchema: unknown;
  /** Called as `execute(input, { toolCallId, messages: [], abortSignal })`. */
  execute?: ((input: never, options: never) => unknown) | undefined;
  /** Called as `toModelOutput({ toolCallId, input, output })`. */
  toModelOutput?: ((options: never) => unknown) | undefined;
}

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

/**
 * `{ name: tool({...}) }` → client tools named by their keys. Throws
 * `ToolrelayError("INVALID_TOOL_DEFINITION")` for a tool without `execute`
 * (an AI SDK client-side tool: nothing to run here), a schema whose JSON
 * Schema is a promise (resolve it first), or anything `defineTool` refuses.
 */
export function fromAiSdkTools(tools: Readonly<Record<string, AiSdkToolLike>>, options: FromAiSdkToolsOptions = {}): ClientTool[] {
  if (typeof tools !== "object" || tools === null)
    throw new ToolrelayError("INVALID_OPTIONS", "fromAiSdkTools() needs an object of AI SDK tools by name");
  return Object.entries(tools).map(([name, tool]) => fromAiSdkTool(name, tool, options));
}

function fromAiSdkTool(name: string, tool: AiSdkToolLike, options: FromAiSdkToolsOptions): ClientTool {
  const fail = (message: string) => new ToolrelayError("INVALID_TOOL_DEFINITION", `AI SDK tool "${name}": ${message}`);
  if (typeof tool !== "object" || tool === null) throw fail("is not a tool object");
  const run = tool.execute as
    | ((input: unknown, options: { toolCallId: string; messages: unknown[]; abortSignal: AbortSignal }) => unknown)
    | undefined;
  if (typeof run !== "function") throw fail("has no execute function (an AI SDK client-side tool cannot run here)");
  const toModelOutput = tool.toModelOutput as ((options: { toolCallId: string; input: unknown; output: unknown }) => unknown) | undefined;
  const schema = inputSchemaOf(tool.inputSchema, fail);
  return defineTool({
    name,
    description: tool.description ?? tool.title ?? "",
    ...schema,
    ...(options.annotations?.[name] ? { annotations: options.annotations[name] } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.overridesRuntimeTool && Object.hasOwn(options.overridesRuntimeTool, name)
      ? { overridesRuntimeTool: options.overridesRuntimeTool[name] }
      : {}),
    async execute(input: unknown, { signal, toolCallId }) {
      const output = await lastValue(run(input, { toolCallId, messages: [], abortSignal: signal }));
      if (typeof toModelOutput !== "function") return output as ToolReturnValue;
      return modelOutput(await toModelOutput({ toolCallId, input, output })) as ToolReturnValue;
    },
  } as Parameters<typeof defineTool<ToolInputSchema>>[0]);
}

type SchemaParts = { inputSchema: ToolInputSchema; jsonSchema?: JsonSchemaObject | undefined; validate?: boolean | undefined };

function inputSchemaOf(value: unknown, fail: (message: string) => ToolrelayError): SchemaParts {
  const schema = typeof value === "function" ? (value as () => unknown)() : value;
  if (isZodSchema(schema) || (isStandardSchema(schema) && !isAiSchema(schema))) return { inputSchema: schema as ToolInputSchema };
  if (!isAiSchema(schema)) throw fail("inputSchema must be a zod schema, a Standard Schema or the AI SDK's jsonSchema(...)");
  const json = (schema as { jsonSchema: unknown }).jsonSchema;
  if (typeof (json as { then?: unknown } | null)?.then === "function")
    throw fail("its JSON Schema is a promise: resolve it and pass the object");
  const validate = (schema as { validate?: ((value: unknown) => unknown) | undefined }).validate;
  if (typeof validate !== "function") return { inputSchema: json as JsonSchemaObject, validate: false };
  const standard: StandardSchemaV1 = {
    "~standard": {
      version: 1,
      vendor: "ai-sdk",
      validate: (input) => {
        const result = validate(input) as AiValidation | PromiseLike<AiValidation>;
        return typeof (result as PromiseLike<AiValidation>).then === "function"
          ? Promise.resolve(result).then(asStandard)
          : asStandard(result as AiValidation);
      },
    },
  };
  return { inputSchema: standard, jsonSchema: json as JsonSchemaObject };
}

type AiValidation = { success: true; value: unknown } | { success: false; error: unknown };

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
