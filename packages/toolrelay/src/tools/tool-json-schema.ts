/**
 * The JSON Schema a tool advertises to the runtime (and so to the model).
 *
 * - zod: generated with zod 4's `z.toJSONSchema` on the input side (`io:
 *   "input"`): a field with a `.default()` is optional for the model, and a
 *   `.transform()` advertises what it accepts, not what it produces.
 * - Standard Schema: what its converter (or the explicit `jsonSchema`) gave.
 * - JSON Schema: the object itself.
 *
 * Whatever the source, {@link asToolJsonSchema} makes the advertised copy:
 * plain JSON (a round trip through `JSON.stringify`), `type: "object"` at the
 * root, deeply frozen, and without the `$schema` key (the runtime and the model
 * providers do not need it; some providers refuse it). Every other key —
 * descriptions, bounds, enums, defaults, `required` — is kept as given.
 *
 * zod pitfall worth knowing: metadata belongs to one schema instance, so
 * `z.string().describe("x").min(1)` loses the description (`.min()` returns a
 * new instance). Put `.describe()` / `.meta()` last: `z.string().min(1).describe("x")`.
 */
import { z } from "zod/v4";
import { ToolrelayError } from "../errors.js";

/** A JSON Schema object for a tool's input: always `type: "object"`. */
export type ToolJsonSchema = Readonly<Record<string, unknown>> & { readonly type: "object" };

/**
 * The JSON Schema advertised for a zod `schema`, deeply frozen. Throws
 * `ToolrelayError("INVALID_TOOL_DEFINITION")` when zod cannot represent the
 * schema in JSON Schema (`z.date()`, `z.bigint()`, a custom type, ...) or when
 * the result is not an object schema (`type: "object"`): tool arguments are
 * always a JSON object.
 */
export function toolJsonSchema(schema: z.ZodType): ToolJsonSchema {
  let generated: unknown;
  try {
    generated = z.toJSONSchema(schema, { io: "input", unrepresentable: "throw" });
  } catch (error) {
    throw definitionError(
      `input schema cannot be described as JSON Schema: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  }
  return asToolJsonSchema(generated, "z.object({...})");
}

/**
 * The advertised copy of a JSON Schema `value` (see the module comment).
 * Throws `INVALID_TOOL_DEFINITION` for a value that is not JSON, not an object
 * or not `type: "object"`; `hint` names what the caller should use instead.
 */
export function asToolJsonSchema(value: unknown, hint: string): ToolJsonSchema {
  let plain: unknown;
  try {
    plain = JSON.parse(JSON.stringify(value)) as unknown;
  } catch (error) {
    throw definitionError(`input schema is not JSON: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  if (typeof plain !== "object" || plain === null || Array.isArray(plain)) {
    throw definitionError(`input schema must describe an object (${hint})`);
  }
  const { $schema: _dropped, ...rest } = plain as Record<string, unknown>;
  if (rest.type !== "object") {
    const found = typeof rest.type === "string" ? `type "${rest.type}"` : "no single type";
    throw definitionError(`input schema must be an object schema (${hint}); its JSON Schema has ${found}`);
  }
  return deepFreeze(rest) as ToolJsonSchema;
}

function definitionError(message: string, cause?: unknown): ToolrelayError {
  return new ToolrelayError("INVALID_TOOL_DEFINITION", message, cause === undefined ? undefined : { cause });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
