/**
 * Validation of tool input against a plain JSON Schema, with ajv 8. The
 * schema is compiled once, when the tool is defined; every call then runs the
 * compiled function (a fraction of a microsecond for a typical tool input:
 * see `npm run bench -- --only schema-validation` and docs/tools.md).
 *
 * Dialect: `$schema` picks the validator — draft 2020-12 (also when there is
 * no `$schema`), 2019-09 or draft-07. Older drafts are refused at definition
 * time: their keywords mean other things (`exclusiveMaximum` as a boolean) and
 * a wrong verdict is worse than none (`validate: false` stays available).
 *
 * Options: every error is collected (`allErrors`), so the model sees every
 * failing path at once; unknown keywords are allowed (`strict: false`: schemas
 * from other languages carry `x-...` and tool-specific keys); `format` is an
 * annotation, as draft 2020-12 defines it by default, and is not checked;
 * nothing is coerced, defaulted or removed — the callback gets the input as
 * sent, once it passed.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import { ToolrelayError } from "../errors.js";
import { formatPath } from "../wire/index.js";
import { invalidAt, invalidWith, type InputIssue, type InputValidation, type SchemaRole } from "./input-issues.js";

/** A compiled validator: never throws. */
export type JsonSchemaValidator = (input: unknown) => InputValidation;

const ajvOptions: Options = {
  allErrors: true,
  strict: false,
  validateFormats: false,
  logger: false,
  // A schema's `$id` must not become a global name: two tools may use the same one.
  addUsedSchema: false,
};

type AjvInstance = InstanceType<typeof Ajv2020>;
const instances = new Map<string, AjvInstance>();

const dialects: Record<string, () => AjvInstance> = {
  "2020-12": () => new Ajv2020(ajvOptions),
  "2019-09": () => new Ajv2019(ajvOptions),
  "draft-07": () => new Ajv(ajvOptions),
};

/**
 * Compile `schema` (an object schema, as given by the tool author). Throws
 * `ToolrelayError("INVALID_TOOL_DEFINITION")` for an unsupported `$schema` or
 * a schema ajv cannot compile (an unresolvable `$ref`, a keyword with a value
 * of the wrong type), with ajv's reason.
 */
export function compileJsonSchemaValidator(schema: Readonly<Record<string, unknown>>, role: SchemaRole = "input"): JsonSchemaValidator {
  const dialect = dialectOf(schema.$schema);
  let ajv = instances.get(dialect);
  if (ajv === undefined) {
    ajv = dialects[dialect]!();
    instances.set(dialect, ajv);
  }
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } catch (error) {
    throw new ToolrelayError(
      "INVALID_TOOL_DEFINITION",
      `${role} JSON Schema does not compile: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  } finally {
    // The compiled function keeps what it needs; the instance's cache must not grow with every tool set.
    ajv.removeSchema(schema);
  }
  return (input) => {
    try {
      if (validate(input)) return { ok: true, value: input };
    } catch (error) {
      return invalidAt(`the tool's ${role} schema failed to run: ${error instanceof Error ? error.message : String(error)}`);
    }
    return invalidWith(issuesOf(validate.errors ?? []));
  };
}

function dialectOf(uri: unknown): string {
  if (uri === undefined) return "2020-12";
  if (typeof uri !== "string") throw unsupported(`$schema must be a string, got ${typeof uri}`);
  const normalized = uri.replace(/^https?:\/\//, "").replace(/#$/, "");
  if (normalized === "json-schema.org/draft/2020-12/schema") return "2020-12";
  if (normalized === "json-schema.org/draft/2019-09/schema") return "2019-09";
  if (normalized === "json-schema.org/draft-07/schema") return "draft-07";
  throw unsupported(`$schema ${JSON.stringify(uri)} is not supported: use draft 2020-12, 2019-09 or draft-07, or pass validate: false`);
}

function unsupported(message: string): ToolrelayError {
  return new ToolrelayError("INVALID_TOOL_DEFINITION", `input JSON Schema: ${message}`);
}

/** ajv's errors as readable issues: the path of the failing value (a missing or extra key included), one line each, no duplicates. */
function issuesOf(errors: readonly ErrorObject[]): InputIssue[] {
  const seen = new Set<string>();
  const issues: InputIssue[] = [];
  for (const error of errors) {
    const path = pointerSegments(error.instancePath);
    const params = error.params as Record<string, unknown>;
    let message = error.message ?? `fails "${error.keyword}"`;
    if (error.keyword === "required" && typeof params.missingProperty === "string") {
      path.push(params.missingProperty);
      message = "is required";
    } else if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
      path.push(params.additionalProperty);
      message = "is not allowed (the schema has additionalProperties: false)";
    } else if (error.keyword === "unevaluatedProperties" && typeof params.unevaluatedProperty === "string") {
      path.push(params.unevaluatedProperty);
      message = "is not allowed (the schema has unevaluatedProperties: false)";
    } else if (error.keyword === "enum" && Array.isArray(params.allowedValues)) {
      message = `must be one of ${params.allowedValues.map((value) => JSON.stringify(value)).join(", ")}`;
    } else if (error.keyword === "const") {
      message = `must be ${JSON.stringify(params.allowedValue)}`;
    }
    const issue = { path: formatPath(path), message };
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

/** `/items/2/a~1b` → `["items", 2, "a/b"]` (array indexes as numbers when they look like one). */
function pointerSegments(pointer: string): Array<string | number> {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((raw) => {
      const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
      return /^(0|[1-9]\d*)$/.test(segment) ? Number(segment) : segment;
    });
}
