/**
 * `defineTool`: declare a client tool — a function the agent can call that
 * runs in this process. An identity-style helper: the `input` zod schema drives
 * the type of `execute`'s first argument, and the definition is checked once,
 * here, so that a bad tool fails at startup and not in the middle of a turn.
 */
import type { z } from "zod";
import { ToolrelayError } from "../errors.js";
import { toolJsonSchema, type ToolJsonSchema } from "./tool-json-schema.js";
import type { ToolReturnValue } from "./tool-result.js";

/** Tool names the runtime and the model providers accept. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** Largest `timeoutMs` a timer can wait for (2^31 - 1 ms, about 24.8 days). */
export const MAX_TOOL_TIMEOUT_MS = 2_147_483_647;

/**
 * What a tool says about its effects. Used for the text the model gets when a
 * call times out: unless the tool is `readOnly` or `idempotent`, the model is
 * told that it may have applied its effects and to inspect state before
 * retrying. Every hint defaults to `false` (unknown).
 */
export interface ToolHints {
  /** The tool only reads; it changes nothing. Safe to retry. Default `false`. */
  readOnly?: boolean;
  /** The tool may delete or overwrite state the user cares about. Default `false`. Cannot be combined with `readOnly`. */
  destructive?: boolean;
  /** Calling it twice with the same input has the same effect as once. Safe to retry. Default `false`. */
  idempotent?: boolean;
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
  /** Report progress; emitted as a `tool-call-progress` session event (not sent to the model). */
  progress(message: string): void;
}

/** The definition passed to {@link defineTool}. */
export interface ToolDefinition<TSchema extends z.ZodType> {
  /** The model-facing name: 1–64 characters from `[a-zA-Z0-9_-]`, unique in a session. Required. */
  name: string;
  /** What the tool does and when to use it; the model reads this. A non-empty string. Required. */
  description: string;
  /** A display name for UIs. Default: none (UIs show `name`). */
  label?: string;
  /**
   * The input schema: a zod object schema (`z.object({...})`). It is the only
   * validator of the arguments, and its JSON Schema (descriptions, bounds,
   * defaults, required names) is what the model sees. Required.
   */
  input: TSchema;
  /** Effect hints; see {@link ToolHints}. Default `{}` (nothing promised). */
  hints?: ToolHints;
  /**
   * Deadline of one call, in ms: a positive integer up to 2^31 - 1. Default:
   * the session's `toolTimeoutMs` (60_000). The runtime gives up on its own
   * after 300_000 ms, so a longer deadline never helps.
   */
  timeoutMs?: number;
  /**
   * Runs the tool with the parsed input (the schema's output: defaults filled
   * in, transforms applied). Return a string, content blocks, a
   * `{ content, isError }` result or any JSON value; throw (or return
   * `errorResult(...)`) to report a failure the model can read.
   */
  execute(input: z.output<TSchema>, context: ToolCallContext): ToolReturnValue | PromiseLike<ToolReturnValue>;
}

/** A checked, frozen tool, ready to be passed to `createSession({ tools })`. */
export interface ClientTool<TSchema extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  /** The display label, or `undefined`. */
  readonly label: string | undefined;
  /** The zod schema the input is validated with. */
  readonly input: TSchema;
  /** The hints as given (frozen); `{}` when none. */
  readonly hints: Readonly<ToolHints>;
  /** The tool's own deadline, or `undefined` for the session default. */
  readonly timeoutMs: number | undefined;
  /** The JSON Schema advertised to the runtime (generated from `input`, frozen). */
  readonly jsonSchema: ToolJsonSchema;
  execute(input: z.output<TSchema>, context: ToolCallContext): ToolReturnValue | PromiseLike<ToolReturnValue>;
}

const clientToolBrand = Symbol.for("toolrelay.client-tool");
const definitionKeys = new Set(["name", "description", "label", "input", "hints", "timeoutMs", "execute"]);
const hintKeys = new Set(["readOnly", "destructive", "idempotent"]);

/**
 * Define a client tool. Checks the definition and throws
 * `ToolrelayError("INVALID_TOOL_DEFINITION")` for a bad name, an empty
 * description, an input schema that is not a zod object schema (or cannot be
 * expressed as JSON Schema), bad hints, a bad `timeoutMs`, a missing `execute`
 * or an unknown option. Returns a frozen {@link ClientTool}.
 *
 * @example
 * const weather = defineTool({
 *   name: "get_weather",
 *   description: "Current weather for a city",
 *   input: z.object({ city: z.string().describe("City name, e.g. Paris") }),
 *   hints: { readOnly: true },
 *   async execute({ city }, { signal }) {
 *     return `sunny in ${city}`;
 *   },
 * });
 */
export function defineTool<TSchema extends z.ZodType>(definition: ToolDefinition<TSchema>): ClientTool<TSchema> {
  if (typeof definition !== "object" || definition === null) {
    throw invalid("defineTool() needs a definition object");
  }
  const { name, description, label, input, hints, timeoutMs, execute } = definition;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw invalid(`tool name ${describeValue(name)} must be 1-64 characters of letters, digits, "_" or "-"`);
  }
  const fail = (message: string, cause?: unknown): ToolrelayError =>
    invalid(`tool "${name}": ${message}`, cause === undefined ? undefined : { cause });
  const unknownKeys = Object.keys(definition).filter((key) => !definitionKeys.has(key));
  if (unknownKeys.length > 0) {
    throw fail(`unknown option${unknownKeys.length > 1 ? "s" : ""} ${unknownKeys.map((key) => `"${key}"`).join(", ")}`);
  }
  if (typeof description !== "string" || description.trim() === "") {
    throw fail("description must be a non-empty string");
  }
  if (label !== undefined && (typeof label !== "string" || label.trim() === "")) {
    throw fail("label must be a non-empty string when given");
  }
  if (!isZodSchema(input)) throw fail("input must be a zod schema, e.g. z.object({ city: z.string() })");
  let jsonSchema: ToolJsonSchema;
  try {
    jsonSchema = toolJsonSchema(input);
  } catch (error) {
    throw fail(error instanceof Error ? error.message : String(error), error);
  }
  const checkedHints = checkHints(hints, fail);
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TOOL_TIMEOUT_MS)) {
    throw fail(`timeoutMs must be a positive integer up to ${MAX_TOOL_TIMEOUT_MS}, got ${describeValue(timeoutMs)}`);
  }
  if (typeof execute !== "function") throw fail("execute must be a function");

  const tool: ClientTool<TSchema> = {
    name,
    description,
    label,
    input,
    hints: checkedHints,
    timeoutMs,
    jsonSchema,
    execute,
  };
  Object.defineProperty(tool, clientToolBrand, { value: true });
  return Object.freeze(tool);
}

/** `true` for a tool made by {@link defineTool} (in this or another copy of the package). */
export function isClientTool(value: unknown): value is ClientTool {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[clientToolBrand] === true;
}

function checkHints(hints: unknown, fail: (message: string) => ToolrelayError): Readonly<ToolHints> {
  if (hints === undefined) return Object.freeze({});
  if (typeof hints !== "object" || hints === null || Array.isArray(hints)) throw fail("hints must be an object");
  const result: ToolHints = {};
  for (const [key, value] of Object.entries(hints)) {
    if (!hintKeys.has(key)) throw fail(`unknown hint "${key}" (use readOnly, destructive or idempotent)`);
    if (value === undefined) continue;
    if (typeof value !== "boolean") throw fail(`hints.${key} must be a boolean`);
    result[key as keyof ToolHints] = value;
  }
  if (result.readOnly === true && result.destructive === true) {
    throw fail("hints.readOnly and hints.destructive cannot both be true");
  }
  return Object.freeze(result);
}

function isZodSchema(value: unknown): value is z.ZodType {
  if (typeof value !== "object" || value === null) return false;
  const internals = (value as { _zod?: unknown })._zod;
  return typeof internals === "object" && internals !== null && "def" in internals;
}

function invalid(message: string, options?: { cause: unknown }): ToolrelayError {
  return new ToolrelayError("INVALID_TOOL_DEFINITION", message, options);
}

function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value === null || value === undefined) return String(value);
  return typeof value;
}
