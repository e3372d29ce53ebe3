/**
 * `defineTool`: declare a client tool — a function the agent can call that
 * runs in this process — in the ecosystem's words: `inputSchema` (zod, any
 * Standard Schema v1 validator, or a plain JSON Schema) and MCP's
 * `annotations`. An identity-style helper: the schema drives the type of
 * `execute`'s first argument, and the definition is checked once, here, so
 * that a bad tool fails at startup and not in the middle of a turn.
 */
import { ToolrelayError } from "../errors.js";
import { RUNTIME_MAX_TOOL_TIMEOUT_MS } from "../internal/runtime-limits.js";
import {
  resolveToolInput,
  type InputValidationOf,
  type JsonSchemaObject,
  type ToolInputKind,
  type ToolInputOf,
  type ToolInputSchema,
} from "./tool-input-schema.js";
import type { ToolJsonSchema } from "./tool-json-schema.js";
import {
  resolveToolOutput,
  type OutputValidator,
  type ToolOutputInputOf,
  type ToolOutputOf,
  type ToolOutputSchema,
} from "./tool-output-schema.js";
import type { ToolReturnValue } from "./tool-result.js";
import { isRuntimeToolName } from "./runtime-tool-names.js";

/** Tool names the runtime and the model providers accept. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Largest `timeoutMs`: 300_000 ms. The runtime stops waiting for a client tool
 * after 300 s and tells nobody, so a longer deadline could never be reached:
 * the model would get the runtime's bare "timed out" instead of the SDK's
 * answer. `defineTool` refuses a larger value rather than clamp it silently.
 */
export const MAX_TOOL_TIMEOUT_MS = RUNTIME_MAX_TOOL_TIMEOUT_MS;

/**
 * What a tool says about itself, with MCP's names and meanings. Every hint
 * is optional and defaults to "unknown" (nothing promised). The hints decide
 * what the model is told when a call times out: unless the tool is
 * `readOnlyHint` or `idempotentHint`, the model reads that the call may have
 * applied its effects and to inspect state before retrying.
 */
export interface ToolAnnotations {
  /** A human-readable name for UIs (sent to the runtime as the tool's label). Default: none (UIs show `name`). */
  title?: string | undefined;
  /** The tool changes nothing. Safe to retry. Default `false`. Cannot be combined with `destructiveHint: true`. */
  readOnlyHint?: boolean | undefined;
  /** The tool may delete or overwrite state the user cares about. Default `false` (unknown). */
  destructiveHint?: boolean | undefined;
  /** Calling it twice with the same input has the same effect as once. Safe to retry. Default `false`. */
  idempotentHint?: boolean | undefined;
  /** The tool reaches outside systems (the web, other services). Default `false` (unknown). */
  openWorldHint?: boolean | undefined;
}

/** What `execute` gets besides its input. */
export interface ToolCallContext {
  /**
   * Fires when the call is over for the SDK: its timeout passed, the turn was
   * aborted, the session closed, or the link stayed down past the grace
   * window. `signal.reason` says which. Pass it to `fetch` and friends.
   */
  signal: AbortSignal;
  /** The model's id for this tool call (stable across re-deliveries of the same call). */
  toolCallId: string;
  /** The agent that called the tool. */
  agentId: string;
  /** The conversation the call belongs to. */
  conversationId: string;
  /**
   * A key for this call, to pass to the services the tool calls (a payment's or a ticket's
   * `Idempotency-Key`): the same on every re-delivery of this call (a reconnect, a relay's
   * re-offer, a replay), different for every new model request, also when the provider reuses the
   * tool call id (`call_0` in every turn). `tr1_` and 43 base64url characters.
   */
  idempotencyKey: string;
  /** Report progress; emitted as a `tool-call-progress` session event (not sent to the model). */
  progress(message: string): void;
}

/** What a `needsApproval` function gets beside the input: who called, and the call's keys. */
export interface ToolApprovalContext {
  /** The model's id for this tool call. */
  toolCallId: string;
  /** The agent that called the tool. */
  agentId: string;
  /** The conversation the call belongs to. */
  conversationId: string;
  /** The call's idempotency key (see {@link ToolCallContext.idempotencyKey}). */
  idempotencyKey: string;
}

/**
 * Whether a call must be approved before it runs: `true` (every call), `false` (none), or a
 * function of the validated input that decides per call (sync or async). A function that throws
 * or rejects refuses the call unrun.
 */
export type NeedsApproval<TInput> = boolean | Bivariant<(input: TInput, context: ToolApprovalContext) => boolean | PromiseLike<boolean>>;

/** Which call a result belongs to: `toModelOutput`'s second argument. */
export interface ToolModelOutputCall<TInput = unknown> {
  /** The model's id for this tool call. */
  toolCallId: string;
  /** The validated input `execute` got. */
  input: TInput;
}

/** What the model receives for a result (see {@link ToolDefinition.toModelOutput}). */
export type ToModelOutput<TOutput, TInput = unknown> = Bivariant<
  (output: TOutput, call: ToolModelOutputCall<TInput>) => ToolReturnValue | PromiseLike<ToolReturnValue>
>;

/**
 * A function type compared like a method (bivariantly in its parameter), so that a tool typed for
 * its own input and output is still a `ClientTool` in a list of tools.
 */
type Bivariant<TFunction extends (...args: never[]) => unknown> = {
  method(...args: Parameters<TFunction>): ReturnType<TFunction>;
}["method"];

/** The definition passed to {@link defineTool}. `TOutput`: what `execute` returns (the app's typed result). */
export interface ToolDefinition<TSchema extends ToolInputSchema, TOutput = ToolReturnValue, TName extends string = string> {
  /**
   * The model-facing name: 1–64 characters from `[a-zA-Z0-9_-]`, unique in a session. Required.
   * Not the name of one of the runtime's own tools (`Read`, `Bash`, `Write`, `memory`, ...:
   * `RESERVED_TOOL_NAME`) unless {@link ToolDefinition.overridesRuntimeTool} is `true`.
   */
  name: TName;
  /** What the tool does and when to use it; the model reads this. A non-empty string. Required. */
  description: string;
  /**
   * The arguments' schema, always an object schema. Required. One of:
   * - a zod schema (`z.object({...})`), zod 4 or zod 3 (zod 3.25's `"zod"`, zod 4's `"zod/v3"`):
   *   validates, and its JSON Schema is generated (for zod 3, as zod 4 writes the same schema; a
   *   type with no JSON form, such as `z.date()`, is refused);
   * - any Standard Schema v1 validator (valibot, arktype, ...): validates; the
   *   JSON Schema comes from its Standard JSON Schema converter or from `jsonSchema`;
   * - a plain JSON Schema object (`{ type: "object", properties, required }`):
   *   advertised as it is and validated by ajv, unless `validate: false`.
   * Descriptions, bounds, enums, defaults and required names reach the model.
   */
  inputSchema: TSchema;
  /**
   * Only beside a Standard Schema that has no JSON Schema converter: the JSON
   * Schema to offer the model (e.g. `toJsonSchema(schema)` from
   * `@valibot/to-json-schema`). Default: the schema's own converter. Typed as any object, because
   * converters type their output as any JSON Schema: that it is an object schema
   * (`type: "object"`) is checked when the tool is defined (`INVALID_TOOL_DEFINITION`).
   */
  jsonSchema?: JsonSchemaObject | object | undefined;
  /**
   * Only with a JSON Schema `inputSchema`: `false` advertises the schema
   * without validating — nothing is refused or changed, `execute` gets the
   * input exactly as sent (for hosts that validate themselves). Default `true`.
   */
  validate?: boolean | undefined;
  /** What the tool does to the world, in MCP's words; see {@link ToolAnnotations}. Default `{}`. */
  annotations?: ToolAnnotations | undefined;
  /**
   * Deadline of one call, in ms: a positive integer up to 300_000 (the
   * runtime's own wait). Default: the session's `toolTimeoutMs` (60_000).
   */
  timeoutMs?: number | undefined;
  /**
   * `true` lets this tool take the name of one of the runtime's own tools (`Read`, `Bash`,
   * `Write`, ...) and so **replace** that tool: the model is offered this tool in its place, and
   * its calls run here, in this process. Without it such a name is refused with
   * `RESERVED_TOOL_NAME`, because the runtime would replace its tool without a word. Has no effect
   * for any other name. Default `false`.
   */
  overridesRuntimeTool?: boolean | undefined;
  /**
   * Ask before each call runs: `true`, or a function of the validated input (sync or async) that
   * says whether this call must be approved. The session's `canUseTool` callback answers (an
   * approval request of `kind: "client-tool"`); a denied call is not run and the model reads that
   * the user declined it. See docs/approvals.md. Default `false`.
   */
  needsApproval?: NeedsApproval<ToolInputOf<TSchema>> | undefined;
  /**
   * The schema of what `execute` returns (zod, a Standard Schema or a JSON Schema; any type at the
   * root). Each result is checked against it before it goes anywhere: a result that does not match
   * is a tool error the model reads. Its output type types `execute`'s return value and the app's
   * `output` (`tool-call-end`, the turn result's `toolOutputs`). Not sent to the runtime (its tool
   * definitions have no output schema). Default: none (the return value is not checked; the app's
   * `output` is `unknown`). With it, the definition is a {@link ToolDefinitionWithOutput}.
   */
  outputSchema?: undefined;
  /**
   * What the model receives for a result: a function of `execute`'s (checked) return value that
   * returns what `execute` could return (a string, content blocks, a JSON value...). Lets the app
   * keep a typed object and the model read a summary. Its second argument names the call
   * (`{ toolCallId, input }`). Default: the return value itself.
   */
  toModelOutput?: ToModelOutput<TOutput, ToolInputOf<TSchema>> | undefined;
  /**
   * Runs the tool with the validated input (for zod and Standard Schemas the
   * schema's output: defaults filled in, transforms applied; for a JSON Schema
   * the input as sent). Return a string, content blocks, a
   * `{ content, isError }` result or any JSON value; throw (or return
   * `errorResult(...)`) to report a failure the model can read.
   */
  execute(input: ToolInputOf<TSchema>, context: ToolCallContext): TOutput | PromiseLike<TOutput>;
}

/** The definition of a tool with an `outputSchema`: `execute` returns the schema's type. */
export type ToolDefinitionWithOutput<
  TSchema extends ToolInputSchema,
  TOutputSchema extends ToolOutputSchema,
  TName extends string = string,
> = Omit<ToolDefinition<TSchema, ToolOutputOf<TOutputSchema>, TName>, "outputSchema" | "execute"> & {
  /** See {@link ToolDefinition.outputSchema}. */
  outputSchema: TOutputSchema;
  /**
   * See {@link ToolDefinition.execute}. Returns what the output schema takes (its input type: a
   * default may be left out, a transformed field has its raw type); the app reads it parsed.
   */
  execute(
    input: ToolInputOf<TSchema>,
    context: ToolCallContext,
  ): ToolOutputInputOf<TOutputSchema> | PromiseLike<ToolOutputInputOf<TOutputSchema>>;
};

/** A checked, frozen tool, ready to be passed to `createSession({ tools })`. */
export interface ClientTool<TSchema extends ToolInputSchema = ToolInputSchema, TOutput = unknown, TName extends string = string> {
  readonly name: TName;
  readonly description: string;
  /** The schema as given. */
  readonly inputSchema: TSchema;
  /** Which kind `inputSchema` is: `"zod"` (zod 4 or zod 3), `"standard-schema"` or `"json-schema"`. */
  readonly inputKind: ToolInputKind;
  /** The JSON Schema advertised to the runtime (deeply frozen, without `$schema`). */
  readonly jsonSchema: ToolJsonSchema;
  /** The annotations as given (frozen); `{}` when none. */
  readonly annotations: Readonly<ToolAnnotations>;
  /** The tool's own deadline, or `undefined` for the session default. */
  readonly timeoutMs: number | undefined;
  /** `true` when the tool may replace the runtime's own tool of the same name (`overridesRuntimeTool`); else `false`. */
  readonly overridesRuntimeTool: boolean;
  /**
   * Validate one call's input: `{ ok: true, value }` (what `execute` gets) or
   * `{ ok: false, issues }` with readable paths. Synchronous whenever the
   * schema is (zod, JSON Schema, a synchronous Standard Schema); never throws,
   * and a returned promise never rejects.
   */
  validateInput(input: unknown): InputValidationOf<TSchema>;
  /** Whether a call must be approved first (`needsApproval` as given; `false` when none). */
  readonly needsApproval: NeedsApproval<ToolInputOf<TSchema>>;
  /** The `outputSchema` as given, or `undefined`. */
  readonly outputSchema: ToolOutputSchema | undefined;
  /** Check one result against `outputSchema` (`undefined` without one). Never throws; a returned promise never rejects. */
  readonly validateOutput: OutputValidator | undefined;
  /** `toModelOutput` as given, or `undefined` (the model gets the return value itself). */
  readonly toModelOutput: ToModelOutput<TOutput> | undefined;
  /** Run the tool: the callback given to `defineTool` (the session calls it after validating the input). */
  execute(input: ToolInputOf<TSchema>, context: ToolCallContext): TOutput | PromiseLike<TOutput>;
}

const clientToolBrand = Symbol.for("toolrelay.client-tool");
const definitionKeys = new Set([
  "name",
  "description",
  "inputSchema",
  "jsonSchema",
  "validate",
  "annotations",
  "timeoutMs",
  "overridesRuntimeTool",
  "needsApproval",
  "outputSchema",
  "toModelOutput",
  "execute",
]);
const hintKeys = new Set(["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]);

/**
 * Define a client tool. Checks the definition and throws
 * `ToolrelayError("INVALID_TOOL_DEFINITION")` for a bad name, an empty
 * description, an `inputSchema` that is none of the three kinds or does not
 * describe an object, a Standard Schema without a JSON Schema, bad
 * annotations, a `timeoutMs` that is not an integer in 1–300_000, a missing
 * `execute` or an unknown option, and `ToolrelayError("RESERVED_TOOL_NAME")` for the name of one
 * of the runtime's own tools without `overridesRuntimeTool: true`. Returns a frozen
 * {@link ClientTool}.
 *
 * @example
 * const weather = defineTool({
 *   name: "get_weather",
 *   description: "Current weather for a city",
 *   inputSchema: z.object({ city: z.string().describe("City name, e.g. Paris") }),
 *   annotations: { readOnlyHint: true },
 *   async execute({ city }, { signal }) {
 *     return `sunny in ${city}`;
 *   },
 * });
 */
export function defineTool<TSchema extends ToolInputSchema, TOutputSchema extends ToolOutputSchema, TName extends string = string>(
  definition: ToolDefinitionWithOutput<TSchema, TOutputSchema, TName>,
): ClientTool<TSchema, ToolOutputOf<TOutputSchema>, TName>;
export function defineTool<TSchema extends ToolInputSchema, TName extends string = string>(
  definition: ToolDefinition<TSchema, ToolReturnValue, TName>,
): ClientTool<TSchema, unknown, TName>;
export function defineTool(
  definition: ToolDefinition<ToolInputSchema, unknown> | ToolDefinitionWithOutput<ToolInputSchema, ToolOutputSchema>,
): ClientTool {
  if (typeof definition !== "object" || definition === null) {
    throw invalid("defineTool() needs a definition object");
  }
  const { name, description, inputSchema, jsonSchema, validate, annotations, timeoutMs, overridesRuntimeTool, execute } = definition;
  const { needsApproval, outputSchema, toModelOutput } = definition;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw invalid(`tool name ${describeValue(name)} must be 1-64 characters of letters, digits, "_" or "-"`);
  }
  const fail = (message: string, cause?: unknown): ToolrelayError =>
    invalid(`tool "${name}": ${message}`, cause === undefined ? undefined : { cause });
  const unknownKeys = Object.keys(definition).filter((key) => !definitionKeys.has(key));
  if (unknownKeys.length > 0) {
    throw fail(
      `unknown option${unknownKeys.length > 1 ? "s" : ""} ${unknownKeys.map((key) => `"${key}"`).join(", ")}${renameHint(unknownKeys)}`,
    );
  }
  if (overridesRuntimeTool !== undefined && typeof overridesRuntimeTool !== "boolean") {
    throw fail(`overridesRuntimeTool must be a boolean, got ${describeValue(overridesRuntimeTool)}`);
  }
  if (overridesRuntimeTool !== true && isRuntimeToolName(name)) throw reservedName(name);
  if (typeof description !== "string" || description.trim() === "") {
    throw fail("description must be a non-empty string");
  }
  let resolved: ReturnType<typeof resolveToolInput>;
  try {
    resolved = resolveToolInput(inputSchema, { jsonSchema, validate });
  } catch (error) {
    throw fail(error instanceof Error ? error.message : String(error), error);
  }
  const checkedAnnotations = checkAnnotations(annotations, fail);
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TOOL_TIMEOUT_MS)) {
    const reason =
      typeof timeoutMs === "number" && timeoutMs > MAX_TOOL_TIMEOUT_MS
        ? ": the runtime stops waiting for a client tool after 300 s, so a longer deadline could never be reached"
        : "";
    throw fail(`timeoutMs must be a positive integer up to ${MAX_TOOL_TIMEOUT_MS}, got ${describeValue(timeoutMs)}${reason}`);
  }
  if (typeof execute !== "function") throw fail("execute must be a function");
  if (needsApproval !== undefined && typeof needsApproval !== "boolean" && typeof needsApproval !== "function") {
    throw fail(`needsApproval must be a boolean or a function of the input, got ${describeValue(needsApproval)}`);
  }
  if (toModelOutput !== undefined && typeof toModelOutput !== "function") {
    throw fail(`toModelOutput must be a function of the output, got ${describeValue(toModelOutput)}`);
  }
  let validateOutput: OutputValidator | undefined;
  try {
    validateOutput = resolveToolOutput(outputSchema);
  } catch (error) {
    throw fail(`outputSchema: ${error instanceof Error ? error.message : String(error)}`, error);
  }

  const tool: ClientTool = {
    name,
    description,
    inputSchema,
    inputKind: resolved.kind,
    jsonSchema: resolved.jsonSchema,
    annotations: checkedAnnotations,
    timeoutMs,
    overridesRuntimeTool: overridesRuntimeTool === true,
    validateInput: resolved.validateInput as (input: unknown) => InputValidationOf<ToolInputSchema>,
    needsApproval: needsApproval ?? false,
    outputSchema,
    validateOutput,
    toModelOutput,
    execute,
  };
  Object.defineProperty(tool, clientToolBrand, { value: true });
  return Object.freeze(tool);
}

/** `true` for a tool made by {@link defineTool} (in this or another copy of the package). */
export function isClientTool(value: unknown): value is ClientTool {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[clientToolBrand] === true;
}

/** Options from before the rename get a pointer to their new name (no aliases: 0.x). */
function renameHint(keys: readonly string[]): string {
  const renames: Record<string, string> = { input: "inputSchema", hints: "annotations", label: "annotations.title", timeout: "timeoutMs" };
  const hints = keys.filter((key) => key in renames).map((key) => `"${key}" is now "${renames[key]}"`);
  return hints.length > 0 ? ` (${hints.join("; ")})` : "";
}

function checkAnnotations(annotations: unknown, fail: (message: string) => ToolrelayError): Readonly<ToolAnnotations> {
  if (annotations === undefined) return Object.freeze({});
  if (typeof annotations !== "object" || annotations === null || Array.isArray(annotations)) throw fail("annotations must be an object");
  const result: ToolAnnotations = {};
  for (const [key, value] of Object.entries(annotations)) {
    if (value === undefined) continue;
    if (key === "title") {
      if (typeof value !== "string" || value.trim() === "") throw fail("annotations.title must be a non-empty string");
      result.title = value;
      continue;
    }
    if (!hintKeys.has(key)) {
      throw fail(`unknown annotation "${key}" (use title, readOnlyHint, destructiveHint, idempotentHint or openWorldHint)`);
    }
    if (typeof value !== "boolean") throw fail(`annotations.${key} must be a boolean`);
    result[key as Exclude<keyof ToolAnnotations, "title">] = value;
  }
  if (result.readOnlyHint === true && result.destructiveHint === true) {
    throw fail("annotations.readOnlyHint and annotations.destructiveHint cannot both be true");
  }
  return Object.freeze(result);
}

function reservedName(name: string): ToolrelayError {
  return new ToolrelayError(
    "RESERVED_TOOL_NAME",
    `tool name "${name}" is the name of one of the runtime's own tools: a client tool with it would replace the runtime's ` +
      `"${name}" for the model without a word. Rename the tool, or pass overridesRuntimeTool: true to replace the runtime's tool on purpose`,
    { details: { name } },
  );
}

function invalid(message: string, options?: { cause: unknown }): ToolrelayError {
  return new ToolrelayError("INVALID_TOOL_DEFINITION", message, options);
}

function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value === null || value === undefined) return String(value);
  return typeof value;
}
