/**
 * A tool's `outputSchema`: what its `execute` returns, checked before the result goes anywhere.
 * The same three kinds as `inputSchema` (zod 4 or 3, any Standard Schema v1 validator, a plain
 * JSON Schema), but any type at the root, and never advertised: the runtime's tool definition has
 * no output schema, so it types and checks the value the app reads (`tool-call-end`'s `output`, the
 * turn result's `toolOutputs`), not what the model sees.
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { z } from "zod/v4";
import { ToolrelayError } from "../errors.js";
import type { InputValidation } from "./input-issues.js";
import { compileJsonSchemaValidator } from "./json-schema-validator.js";
import { isStandardSchema, validateStandardInput } from "./standard-schema-input.js";
import { isZodSchema } from "./tool-input-schema.js";
import { validateToolInput, validateZod3Input } from "./validate-tool-input.js";
import { isZod3Schema } from "./zod3-json-schema.js";

/** A plain JSON Schema document for a tool's output (any `type`, or none). */
export interface JsonSchemaDocument {
  readonly [keyword: string]: unknown;
}

/** What `outputSchema` accepts: a zod schema, any Standard Schema v1 validator, or a plain JSON Schema object. */
export type ToolOutputSchema = z.ZodType | StandardSchemaV1 | JsonSchemaDocument;

/** The type an output schema describes: zod's output type, a Standard Schema's output type, or `unknown` for a JSON Schema. */
export type ToolOutputOf<TSchema> = TSchema extends z.ZodType
  ? z.output<TSchema>
  : TSchema extends StandardSchemaV1
    ? StandardSchemaV1.InferOutput<TSchema>
    : unknown;

/**
 * What `execute` returns for an output schema: the schema's input type (zod's input type, a
 * Standard Schema's input type, `unknown` for a JSON Schema). It differs from {@link ToolOutputOf}
 * where the schema fills in defaults or transforms: the returned value is parsed into the output.
 */
export type ToolOutputInputOf<TSchema> = TSchema extends z.ZodType
  ? z.input<TSchema>
  : TSchema extends StandardSchemaV1
    ? StandardSchemaV1.InferInput<TSchema>
    : unknown;

/** The checker of one tool's output: `{ ok: true, value }` (the schema's output: defaults, transforms) or the failing paths. Never throws. */
export type OutputValidator = (value: unknown) => InputValidation | Promise<InputValidation>;

/**
 * The validator of `outputSchema`, or `undefined` when there is none. Throws
 * `ToolrelayError("INVALID_TOOL_DEFINITION")` for a value that is none of the three kinds, or a
 * JSON Schema ajv cannot compile.
 */
export function resolveToolOutput(outputSchema: unknown): OutputValidator | undefined {
  if (outputSchema === undefined) return undefined;
  if (isZodSchema(outputSchema)) return (value) => validateToolInput(outputSchema, value, "output");
  if (isZod3Schema(outputSchema)) return (value) => validateZod3Input(outputSchema, value, "output");
  if (isStandardSchema(outputSchema)) return (value) => validateStandardInput(outputSchema, value, "output");
  if (typeof outputSchema === "object" && outputSchema !== null && !Array.isArray(outputSchema)) {
    return compileJsonSchemaValidator(outputSchema as Record<string, unknown>, "output");
  }
  throw new ToolrelayError(
    "INVALID_TOOL_DEFINITION",
    "outputSchema must be a zod schema, a Standard Schema validator (valibot, arktype, ...) or a JSON Schema object",
  );
}
