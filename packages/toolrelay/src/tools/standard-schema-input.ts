/**
 * A Standard Schema v1 validator (valibot, arktype, effect, ...) as a tool's
 * input schema. The validator is the only judge of the arguments; the JSON
 * Schema the model is offered must come from somewhere real:
 *
 * 1. an explicit `jsonSchema` given beside it in the definition, or
 * 2. the schema's own Standard JSON Schema converter
 *    (`schema["~standard"].jsonSchema.input({ target })`, e.g. valibot through
 *    `toStandardJsonSchema(schema)` from `@valibot/to-json-schema`), asked for
 *    draft 2020-12 first and draft-07 if the library refuses that target.
 *
 * A converter that describes a type it cannot convert as `{}` (arktype's, for a `Date`) is made
 * to mark it instead, and the schema is refused: `{}` would tell the model "any value" for a field
 * the validator then refuses every time.
 *
 * Without either, `defineTool` refuses the definition: the SDK never guesses
 * a schema the model would be told about.
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";
import { formatPath } from "../wire/index.js";
import {
  findProtoKey,
  invalidAt,
  invalidWith,
  protoKeyRefused,
  type InputIssue,
  type InputValidation,
  type SchemaRole,
} from "./input-issues.js";
import { errorText } from "./tool-result.js";

/** `true` for a Standard Schema v1 validator (any library). zod 4 schemas are one too; check zod first. */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  const props = (value as { "~standard"?: unknown })["~standard"];
  return (
    typeof props === "object" &&
    props !== null &&
    (props as { version?: unknown }).version === 1 &&
    typeof (props as { validate?: unknown }).validate === "function"
  );
}

/** The schema's Standard JSON Schema converter, when it has one. */
export function jsonSchemaConverterOf(schema: StandardSchemaV1): StandardJSONSchemaV1.Converter | undefined {
  const converter = (schema["~standard"] as Partial<StandardJSONSchemaV1.Props>).jsonSchema;
  return typeof converter === "object" && converter !== null && typeof converter.input === "function" ? converter : undefined;
}

/**
 * Where a converter writes a type it has no JSON form for (see {@link strictLibraryOptions}); the
 * walk below finds it and refuses the schema.
 */
const noJsonFormKey = "x-toolrelay-no-json-form";

/**
 * Library options that make a converter mark what it cannot convert instead of describing it as
 * `{}` (any value), by vendor. arktype's Standard JSON Schema converter falls back to `{}` for a
 * `Date`, a `bigint`, a `Map`, an `instanceof` class, a symbol and an `undefined` unit; its other
 * fallbacks (a `.narrow()` predicate, a morph's output, a default JSON cannot hold) keep the
 * input's JSON Schema, as zod 4 does for refinements, and are left as arktype has them. Other
 * libraries throw for what they cannot convert (valibot, zod).
 */
const strictLibraryOptions: Readonly<Record<string, Record<string, unknown>>> = {
  arktype: {
    fallback: {
      date: () => ({ [noJsonFormKey]: "a Date" }),
      domain: (context: { domain?: unknown }) => ({ [noJsonFormKey]: `a ${String(context.domain)}` }),
      proto: (context: { proto?: { name?: unknown } | undefined }) => ({
        [noJsonFormKey]: `an instance of ${typeof context.proto?.name === "string" && context.proto.name !== "" ? context.proto.name : "a class"}`,
      }),
      symbolKey: () => ({ [noJsonFormKey]: "a symbol key" }),
      unit: (context: { unit?: unknown }) => ({ [noJsonFormKey]: `the ${typeof context.unit} ${String(context.unit)}` }),
    },
  },
};

/**
 * The input JSON Schema from the schema's converter: draft 2020-12, or
 * draft-07 when the library throws for 2020-12. Throws the library's error
 * when it supports neither (e.g. a transform it cannot describe), and an `Error` naming every
 * path whose type has no JSON form when the converter would have offered it as `{}` (arktype).
 */
export function convertStandardJsonSchema(converter: StandardJSONSchemaV1.Converter, vendor = ""): Record<string, unknown> {
  const libraryOptions = Object.hasOwn(strictLibraryOptions, vendor) ? strictLibraryOptions[vendor] : undefined;
  const convert = (target: StandardJSONSchemaV1.Target) =>
    converter.input(libraryOptions === undefined ? { target } : { target, libraryOptions });
  let converted: Record<string, unknown>;
  try {
    converted = convert("draft-2020-12");
  } catch (error) {
    try {
      converted = convert("draft-07");
    } catch {
      throw error;
    }
  }
  const unconvertible = typesWithoutJsonForm(converted);
  if (unconvertible.length > 0) {
    throw new Error(
      `it has types JSON Schema cannot express, which its converter would offer the model as {} (any value): ${unconvertible.join(", ")}. ` +
        'Accept a JSON type there and convert it in the schema (for a date, arktype\'s "string.date.iso.parse" reads an ISO string into a Date), ' +
        "or leave the field out of the tool's input",
    );
  }
  return converted;
}

/** `when (a Date)`, `items[] (a bigint)`, ... for every place the converter marked. */
function typesWithoutJsonForm(schema: unknown): string[] {
  const found: string[] = [];
  const visit = (node: unknown, path: string): void => {
    if (typeof node !== "object" || node === null) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, path);
      return;
    }
    const record = node as Record<string, unknown>;
    if (typeof record[noJsonFormKey] === "string") {
      found.push(`${path === "" ? "(root)" : path} (${record[noJsonFormKey]})`);
      return;
    }
    for (const [key, value] of Object.entries(record)) {
      if ((key === "properties" || key === "patternProperties") && typeof value === "object" && value !== null) {
        for (const [name, property] of Object.entries(value)) visit(property, joinPath(path, name));
      } else if (key === "items" || key === "prefixItems" || key === "additionalItems") visit(value, `${path}[]`);
      else if (key === "additionalProperties") visit(value, `${path}[*]`);
      else visit(value, path);
    }
  };
  visit(schema, "");
  return found;
}

function joinPath(path: string, name: string): string {
  const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
  if (key.startsWith('"')) return `${path}[${key}]`;
  return path === "" ? key : `${path}.${key}`;
}

/**
 * Validate `input` with `schema["~standard"].validate`. Synchronous when the
 * library validates synchronously; a promise when it returns one (an async
 * refinement). Never throws and the promise never rejects: a validator that
 * throws is an issue at `(root)`.
 */
export function validateStandardInput(
  schema: StandardSchemaV1,
  input: unknown,
  role: SchemaRole = "input",
): InputValidation | Promise<InputValidation> {
  const protoPath = findProtoKey(input);
  if (protoPath !== undefined) return protoKeyRefused(protoPath);
  let result: StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>>;
  try {
    result = schema["~standard"].validate(input);
  } catch (error) {
    return failedToRun(error, role);
  }
  if (isPromiseLike(result)) return Promise.resolve(result).then(fromResult, (error: unknown) => failedToRun(error, role));
  return fromResult(result);
}

function fromResult(result: StandardSchemaV1.Result<unknown>): InputValidation {
  if (result.issues === undefined) return { ok: true, value: result.value };
  return invalidWith(result.issues.map(toInputIssue));
}

function toInputIssue(issue: StandardSchemaV1.Issue): InputIssue {
  const path = (issue.path ?? []).map((segment) => (typeof segment === "object" && segment !== null ? segment.key : segment));
  return { path: formatPath(path), message: typeof issue.message === "string" && issue.message !== "" ? issue.message : "Invalid input" };
}

function failedToRun(error: unknown, role: SchemaRole): InputValidation {
  return invalidAt(`the tool's ${role} schema failed to run: ${errorText(error)}`);
}

function isPromiseLike(value: unknown): value is PromiseLike<StandardSchemaV1.Result<unknown>> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
