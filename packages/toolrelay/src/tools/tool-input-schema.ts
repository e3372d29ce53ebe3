/**
 * The three kinds of `inputSchema` a tool may have, and how each becomes the
 * two things a tool needs: the JSON Schema the model is offered, and the
 * validator every call goes through.
 *
 * | `inputSchema`            | advertised                              | validated by                 |
 * | ------------------------ | --------------------------------------- | ---------------------------- |
 * | a zod 4 schema           | `z.toJSONSchema(schema, { io: "input" })` | zod (`z.safeParse`)          |
 * | a zod 3 schema           | `zod3JsonSchema(schema)` (same shapes)  | zod 3 (`schema.safeParse`)   |
 * | a Standard Schema v1     | `jsonSchema` given beside it, or the    | the library's own `validate` |
 * |                          | schema's Standard JSON Schema converter |                              |
 * | a plain JSON Schema      | the object itself                       | ajv (compiled once), or none with `validate: false` |
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { z } from "zod/v4";
import { ToolrelayError } from "../errors.js";
import type { InputValidation } from "./input-issues.js";
import { compileJsonSchemaValidator } from "./json-schema-validator.js";
import { convertStandardJsonSchema, isStandardSchema, jsonSchemaConverterOf, validateStandardInput } from "./standard-schema-input.js";
import { asToolJsonSchema, toolJsonSchema, type ToolJsonSchema } from "./tool-json-schema.js";
import { validateToolInput, validateZod3Input } from "./validate-tool-input.js";
import { isZod3Schema, Zod3ConversionError, zod3JsonSchema, type Zod3Schema } from "./zod3-json-schema.js";

/** A plain JSON Schema object describing a tool's arguments (`type: "object"` at the root). */
export interface JsonSchemaObject {
  readonly type: "object";
  readonly [keyword: string]: unknown;
}

/** What `inputSchema` accepts: a zod schema, any Standard Schema v1 validator, or a plain JSON Schema object. */
export type ToolInputSchema = z.ZodType | StandardSchemaV1 | JsonSchemaObject;

/**
 * The type `execute` receives for a schema: zod's output type, a Standard
 * Schema's output type, or a JSON object for a plain JSON Schema (whose
 * properties TypeScript cannot see: narrow them, or use zod or valibot).
 */
export type ToolInputOf<TSchema> = TSchema extends z.ZodType
  ? z.output<TSchema>
  : TSchema extends StandardSchemaV1
    ? StandardSchemaV1.InferOutput<TSchema>
    : Record<string, unknown>;

/**
 * What `validateInput` returns for a schema: always synchronous for zod and
 * JSON Schema; for a Standard Schema, a promise when the library validates
 * asynchronously.
 */
export type InputValidationOf<TSchema> = TSchema extends z.ZodType
  ? InputValidation
  : TSchema extends StandardSchemaV1
    ? InputValidation | Promise<InputValidation>
    : InputValidation;

/** Which kind an `inputSchema` is. */
export type ToolInputKind = "zod" | "standard-schema" | "json-schema";

/** The advertised schema and the validator of one tool. */
export interface ResolvedToolInput {
  kind: ToolInputKind;
  jsonSchema: ToolJsonSchema;
  validateInput(input: unknown): InputValidation | Promise<InputValidation>;
}

export interface ResolveToolInputOptions {
  /** Only beside a Standard Schema: the JSON Schema to advertise for it. */
  jsonSchema?: unknown;
  /** Only with a JSON Schema: `false` advertises without validating. Default `true`. */
  validate?: unknown;
}

/** Throws `ToolrelayError("INVALID_TOOL_DEFINITION")` with a message naming what to change. */
export function resolveToolInput(inputSchema: unknown, options: ResolveToolInputOptions): ResolvedToolInput {
  const { jsonSchema, validate } = options;
  if (validate !== undefined && typeof validate !== "boolean") throw invalid("validate must be a boolean when given");
  if (isZodSchema(inputSchema)) {
    if (jsonSchema !== undefined) throw invalid("jsonSchema is generated from a zod schema; remove it");
    if (validate !== undefined) throw invalid("validate applies to a JSON Schema inputSchema only; a zod schema always validates");
    const schema = inputSchema;
    return { kind: "zod", jsonSchema: toolJsonSchema(schema), validateInput: (input) => validateToolInput(schema, input) };
  }
  if (isZod3Schema(inputSchema)) {
    if (jsonSchema !== undefined) throw invalid("jsonSchema is generated from a zod schema; remove it");
    if (validate !== undefined) throw invalid("validate applies to a JSON Schema inputSchema only; a zod schema always validates");
    const schema = inputSchema;
    return { kind: "zod", jsonSchema: zod3ToolJsonSchema(schema), validateInput: (input) => validateZod3Input(schema, input) };
  }
  if (isStandardSchema(inputSchema)) {
    if (validate !== undefined) throw invalid("validate applies to a JSON Schema inputSchema only; a Standard Schema always validates");
    const schema = inputSchema;
    return {
      kind: "standard-schema",
      jsonSchema: standardJsonSchema(schema, jsonSchema),
      validateInput: (input) => validateStandardInput(schema, input),
    };
  }
  if (isPlainObject(inputSchema)) {
    if (jsonSchema !== undefined)
      throw invalid("jsonSchema is only for a Standard Schema inputSchema; a JSON Schema is advertised as it is");
    const advertised = asToolJsonSchema(inputSchema, '{ type: "object", properties: {...} }');
    if (validate === false) return { kind: "json-schema", jsonSchema: advertised, validateInput: (input) => ({ ok: true, value: input }) };
    const validator = compileJsonSchemaValidator(inputSchema);
    return { kind: "json-schema", jsonSchema: advertised, validateInput: validator };
  }
  throw invalid(
    "inputSchema must be a zod schema (z.object({...})), a Standard Schema validator (valibot, arktype, ...) " +
      'or a JSON Schema object ({ type: "object", properties: {...} })',
  );
}

function zod3ToolJsonSchema(schema: Zod3Schema): ToolJsonSchema {
  let converted: Record<string, unknown>;
  try {
    converted = zod3JsonSchema(schema);
  } catch (error) {
    const where = error instanceof Zod3ConversionError ? " at " : ": ";
    throw invalid(
      `the zod 3 input schema cannot be described as JSON Schema${where}${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  }
  return asToolJsonSchema(converted, "z.object({...})");
}

function standardJsonSchema(schema: StandardSchemaV1, explicit: unknown): ToolJsonSchema {
  if (explicit !== undefined) {
    if (!isPlainObject(explicit)) throw invalid('jsonSchema must be a JSON Schema object ({ type: "object", ... })');
    return asToolJsonSchema(explicit, "jsonSchema");
  }
  const vendor = schema["~standard"].vendor;
  const converter = jsonSchemaConverterOf(schema);
  if (converter === undefined) {
    throw invalid(
      `the ${vendor} schema has no JSON Schema converter, so the SDK cannot tell the model what it accepts: ` +
        "pass jsonSchema beside it (for valibot: toJsonSchema(schema) from @valibot/to-json-schema), " +
        "or give a schema that implements Standard JSON Schema (valibot: toStandardJsonSchema(schema))",
    );
  }
  let converted: unknown;
  try {
    converted = convertStandardJsonSchema(converter, vendor);
  } catch (error) {
    throw invalid(
      `the ${vendor} schema cannot be described as JSON Schema: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  }
  return asToolJsonSchema(converted, `a ${vendor} object schema`);
}

/** `true` for a zod 4 schema (it has `_zod.def`). A zod 3 schema is `isZod3Schema`'s. */
export function isZodSchema(value: unknown): value is z.ZodType {
  if (typeof value !== "object" || value === null) return false;
  const internals = (value as { _zod?: unknown })._zod;
  return typeof internals === "object" && internals !== null && "def" in internals;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function invalid(message: string, cause?: unknown): ToolrelayError {
  return new ToolrelayError("INVALID_TOOL_DEFINITION", message, cause === undefined ? undefined : { cause });
}
