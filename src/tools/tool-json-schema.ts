/**
 * The JSON Schema a tool advertises to the runtime (and so to the model),
 * generated from the tool's zod schema with zod 4's `z.toJSONSchema`. The zod
 * schema stays the only validator; this is its description, never a second
 * rule set.
 *
 * Input side (`io: "input"`): a field with a `.default()` is optional for the
 * model, and a `.transform()` advertises what it accepts, not what it produces.
 * Descriptions, bounds, defaults, enums and required names are kept as zod
 * emits them. Only the `$schema` key is removed (the runtime and the model
 * providers do not need it).
 *
 * zod pitfall worth knowing: metadata belongs to one schema instance, so
 * `z.string().describe("x").min(1)` loses the description (`.min()` returns a
 * new instance). Put `.describe()` / `.meta()` last: `z.string().min(1).describe("x")`.
 */
import { z } from "zod";
import { ToolrelayError } from "../errors.js";

/** A JSON Schema object for a tool's input: always `type: "object"`. */
export type ToolJsonSchema = Readonly<Record<string, unknown>> & { readonly type: "object" };

/**
 * The JSON Schema advertised for `schema`, deeply frozen. Throws
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
    throw new ToolrelayError(
      "INVALID_TOOL_DEFINITION",
      `input schema cannot be described as JSON Schema: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  // A JSON round trip guarantees a plain, serializable object (no prototypes,
  // no undefined values) that encodes exactly as it will be sent.
  let plain: unknown;
  try {
    plain = JSON.parse(JSON.stringify(generated)) as unknown;
  } catch (error) {
    throw new ToolrelayError("INVALID_TOOL_DEFINITION", "input schema produced a JSON Schema that is not JSON", { cause: error });
  }
  if (typeof plain !== "object" || plain === null || Array.isArray(plain)) {
    throw new ToolrelayError("INVALID_TOOL_DEFINITION", "input schema must describe an object (use z.object({...}))");
  }
  const { $schema: _dropped, ...rest } = plain as Record<string, unknown>;
  if (rest.type !== "object") {
    const found = typeof rest.type === "string" ? `type "${rest.type}"` : "no single type";
    throw new ToolrelayError(
      "INVALID_TOOL_DEFINITION",
      `input schema must be an object schema (z.object({...})); its JSON Schema has ${found}`,
    );
  }
  return deepFreeze(rest) as ToolJsonSchema;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
