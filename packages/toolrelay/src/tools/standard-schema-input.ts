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
 * Without either, `defineTool` refuses the definition: the SDK never guesses
 * a schema the model would be told about.
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";
import { formatPath } from "../wire/index.js";
import { findProtoKey, invalidAt, invalidWith, protoKeyRefused, type InputIssue, type InputValidation } from "./input-issues.js";
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
 * The input JSON Schema from the schema's converter: draft 2020-12, or
 * draft-07 when the library throws for 2020-12. Throws the library's error
 * when it supports neither (e.g. a transform it cannot describe).
 */
export function convertStandardJsonSchema(converter: StandardJSONSchemaV1.Converter): Record<string, unknown> {
  try {
    return converter.input({ target: "draft-2020-12" });
  } catch (error) {
    try {
      return converter.input({ target: "draft-07" });
    } catch {
      throw error;
    }
  }
}

/**
 * Validate `input` with `schema["~standard"].validate`. Synchronous when the
 * library validates synchronously; a promise when it returns one (an async
 * refinement). Never throws and the promise never rejects: a validator that
 * throws is an issue at `(root)`.
 */
export function validateStandardInput(schema: StandardSchemaV1, input: unknown): InputValidation | Promise<InputValidation> {
  const protoPath = findProtoKey(input);
  if (protoPath !== undefined) return protoKeyRefused(protoPath);
  let result: StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>>;
  try {
    result = schema["~standard"].validate(input);
  } catch (error) {
    return failedToRun(error);
  }
  if (isPromiseLike(result)) return Promise.resolve(result).then(fromResult, failedToRun);
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

function failedToRun(error: unknown): InputValidation {
  return invalidAt(`the tool's input schema failed to run: ${errorText(error)}`);
}

function isPromiseLike(value: unknown): value is PromiseLike<StandardSchemaV1.Result<unknown>> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
