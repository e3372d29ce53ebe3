/**
 * The JSON Schema of a zod 3 schema (zod 3's classic API: `import { z } from "zod"` with zod
 * 3.25, or `from "zod/v3"` with zod 4), which zod 4's `z.toJSONSchema` cannot read. Written here
 * rather than taken from a converter package (the MCP SDK depends on `zod-to-json-schema`, the AI
 * SDK carries a copy of it): a fact the model is told comes from one place we test.
 *
 * The output follows what `z.toJSONSchema(schema, { io: "input" })` gives for the same schema
 * written with zod 4 (draft 2020-12): the input side of transforms and pipes, `.default()` fields
 * optional with their `default`, `.nullable()` as `anyOf [..., { type: "null" }]`, unions as
 * `anyOf`, intersections as `allOf`, tuples as `prefixItems`, `.strict()` as
 * `additionalProperties: false`. Refinements and checks JSON Schema cannot say (`.refine()`, a
 * cuid, an emoji) are left out, as zod 4 leaves them out; the validator still applies them.
 *
 * A type with no JSON form (`z.date()`, `z.bigint()`, `z.map()`, ...) and a recursive `z.lazy()`
 * are refused with a {@link Zod3ConversionError} that names the path and what to write instead:
 * the SDK never offers the model `{}` for a field it cannot describe.
 */

/** The part of a zod 3 schema this file reads: its `_def`, tagged by `typeName`. */
export interface Zod3Schema {
  readonly _def: Zod3Def;
  safeParse(input: unknown): Zod3SafeParseResult;
}

/** A zod 3 `_def`: `typeName` (`"ZodString"`, `"ZodObject"`, ...) and the fields of that type. */
export interface Zod3Def {
  readonly typeName: string;
  readonly description?: string | undefined;
  readonly [field: string]: unknown;
}

/** What zod 3's `safeParse` returns. */
export type Zod3SafeParseResult =
  | { success: true; data: unknown }
  | { success: false; error: { issues: ReadonlyArray<{ path: ReadonlyArray<string | number>; message: string }> } };

type JsonSchema = Record<string, unknown>;

/** Why a zod 3 schema has no JSON Schema: where, and what to write instead. */
export class Zod3ConversionError extends Error {
  override name = "Zod3ConversionError";
}

/**
 * `true` for a zod 3 schema: a `_def` with a `typeName` and a `safeParse` method, and no `_zod`
 * (which every zod 4 schema has).
 */
export function isZod3Schema(value: unknown): value is Zod3Schema {
  if (typeof value !== "object" || value === null || "_zod" in value) return false;
  const def = (value as { _def?: unknown })._def;
  return (
    typeof def === "object" &&
    def !== null &&
    typeof (def as { typeName?: unknown }).typeName === "string" &&
    typeof (value as { safeParse?: unknown }).safeParse === "function"
  );
}

/**
 * The input JSON Schema of a zod 3 `schema` (draft 2020-12, no `$schema`). Throws
 * {@link Zod3ConversionError} for a type JSON Schema cannot express, a recursive schema, a zod 4
 * schema inside a zod 3 one, or a zod 3 type this converter does not know.
 */
export function zod3JsonSchema(schema: Zod3Schema): JsonSchema {
  return convert(schema, [], []);
}

/** What to write instead of a type that has no JSON form, by `typeName`. */
const noJsonForm: Readonly<Record<string, string>> = {
  ZodDate: "z.date() has no JSON form: take an ISO string and parse it, z.string().datetime().transform((text) => new Date(text))",
  ZodBigInt: "z.bigint() has no JSON form: take a string of digits, z.string().regex(/^-?\\d+$/).transform(BigInt), or a z.number().int()",
  ZodMap: "z.map() has no JSON form: take an object, z.record(z.string(), value), and build the Map in execute",
  ZodSet: "z.set() has no JSON form: take an array, z.array(item), and build the Set in execute",
  ZodSymbol: "z.symbol() is not a JSON value: leave it out of the tool's input",
  ZodFunction: "z.function() is not a JSON value: leave it out of the tool's input",
  ZodPromise: "z.promise() is not a JSON value: leave it out of the tool's input",
  ZodUndefined: "z.undefined() is not a JSON value: make the field .optional() instead",
  ZodVoid: "z.void() is not a JSON value: make the field .optional() instead",
  ZodNaN: "z.nan() is not a JSON value (JSON has no NaN): leave it out of the tool's input",
};

const stringFormats: Readonly<Record<string, string>> = {
  email: "email",
  url: "uri",
  uuid: "uuid",
  datetime: "date-time",
  date: "date",
  time: "time",
  duration: "duration",
};

function convert(schema: Zod3Schema, path: readonly (string | number)[], open: readonly Zod3Schema[]): JsonSchema {
  if (!isZod3Schema(schema)) {
    throw failure(
      path,
      "this is not a zod 3 schema (a zod 4 schema inside a zod 3 one?): write the whole input schema with one zod, " +
        'zod 3 (import { z } from "zod" with zod 3) or zod 4 (import { z } from "zod/v4")',
    );
  }
  if (open.includes(schema)) {
    throw failure(
      path,
      "a recursive z.lazy() schema: zod 3 schemas are converted without references. Write this schema with zod 4 " +
        '(import { z } from "zod/v4", which zod 3.25 ships too), whose converter writes recursion as $ref, or pass a JSON Schema object as inputSchema',
    );
  }
  const def = schema._def;
  const inner = (child: unknown, at: readonly (string | number)[] = path): JsonSchema =>
    convert(child as Zod3Schema, at, [...open, schema]);
  const described = (result: JsonSchema): JsonSchema =>
    typeof def.description === "string" ? { description: def.description, ...result } : result;
  const refusal = noJsonForm[def.typeName];
  if (refusal !== undefined) throw failure(path, refusal);
  switch (def.typeName) {
    case "ZodString":
      return described(stringSchema(def));
    case "ZodNumber":
      return described(numberSchema(def));
    case "ZodBoolean":
      return described({ type: "boolean" });
    case "ZodNull":
      return described({ type: "null" });
    case "ZodAny":
    case "ZodUnknown":
      return described({});
    case "ZodNever":
      return described({ not: {} });
    case "ZodLiteral":
      return described(literalSchema(def.value, path));
    case "ZodEnum":
      return described({ type: "string", enum: [...(def.values as string[])] });
    case "ZodNativeEnum":
      return described(nativeEnumSchema(def.values as Record<string, string | number>));
    case "ZodObject":
      return described(objectSchema(def, path, inner));
    case "ZodArray":
      return described(arraySchema(def, path, inner));
    case "ZodTuple": {
      const items = (def.items as unknown[]).map((item, index) => inner(item, [...path, index]));
      const rest = def.rest === null || def.rest === undefined ? {} : { items: inner(def.rest, [...path, items.length]) };
      return described({ type: "array", prefixItems: items, ...rest });
    }
    case "ZodRecord":
      return described({
        type: "object",
        propertyNames: inner(def.keyType),
        additionalProperties: inner(def.valueType, [...path, "*"]),
      });
    case "ZodUnion":
    case "ZodDiscriminatedUnion":
      return described({ anyOf: optionsOf(def.options).map((option) => inner(option)) });
    case "ZodIntersection":
      return described({ allOf: [inner(def.left), inner(def.right)] });
    case "ZodOptional":
      return described(inner(def.innerType));
    case "ZodNullable":
      return described({ anyOf: [inner(def.innerType), { type: "null" }] });
    case "ZodDefault":
      return described({ default: (def.defaultValue as () => unknown)(), ...inner(def.innerType) });
    case "ZodReadonly":
      return described({ readOnly: true, ...inner(def.innerType) });
    case "ZodCatch":
      return described(inner(def.innerType));
    case "ZodBranded":
      return described(inner(def.type));
    case "ZodEffects":
      // A refinement, a transform or a preprocess: the model writes the input of the inner schema.
      return described(inner(def.schema));
    case "ZodPipeline":
      return described(inner(def.in));
    case "ZodLazy":
      return described(inner((def.getter as () => unknown)()));
    default:
      throw failure(
        path,
        `the zod 3 type ${def.typeName} is not converted here: write the input schema with zod 4 ` +
          '(import { z } from "zod/v4", which zod 3.25 ships too), or pass a JSON Schema object as inputSchema',
      );
  }
}

function stringSchema(def: Zod3Def): JsonSchema {
  const result: JsonSchema = { type: "string" };
  const patterns: string[] = [];
  for (const check of (def.checks as Array<{ kind: string; value?: unknown; regex?: RegExp | undefined; version?: string | undefined }>) ??
    []) {
    switch (check.kind) {
      case "min":
        result.minLength = check.value;
        break;
      case "max":
        result.maxLength = check.value;
        break;
      case "length":
        result.minLength = check.value;
        result.maxLength = check.value;
        break;
      case "regex":
        if (check.regex !== undefined) patterns.push(check.regex.source);
        break;
      case "startsWith":
        patterns.push(`^${escapeRegExp(String(check.value))}.*`);
        break;
      case "endsWith":
        patterns.push(`.*${escapeRegExp(String(check.value))}$`);
        break;
      case "includes":
        patterns.push(escapeRegExp(String(check.value)));
        break;
      case "ip":
        if (check.version === "v4" || check.version === "v6") result.format = `ip${check.version}`;
        break;
      default: {
        const format = stringFormats[check.kind];
        if (format !== undefined) result.format = format;
      }
    }
  }
  if (patterns.length === 1) result.pattern = patterns[0];
  else if (patterns.length > 1) result.allOf = patterns.map((pattern) => ({ pattern }));
  return result;
}

function numberSchema(def: Zod3Def): JsonSchema {
  const result: JsonSchema = { type: "number" };
  for (const check of (def.checks as Array<{ kind: string; value?: number | undefined; inclusive?: boolean | undefined }>) ?? []) {
    if (check.kind === "int") result.type = "integer";
    else if (check.kind === "min") result[check.inclusive === false ? "exclusiveMinimum" : "minimum"] = check.value;
    else if (check.kind === "max") result[check.inclusive === false ? "exclusiveMaximum" : "maximum"] = check.value;
    else if (check.kind === "multipleOf") result.multipleOf = check.value;
  }
  return result;
}

function literalSchema(value: unknown, path: readonly (string | number)[]): JsonSchema {
  if (value === null) return { type: "null", const: null };
  if (typeof value === "string" || typeof value === "boolean") return { type: typeof value, const: value };
  if (typeof value === "number" && Number.isFinite(value)) return { type: "number", const: value };
  throw failure(path, `z.literal(${String(value)}) is not a JSON value: use a string, number, boolean or null literal`);
}

/** A TypeScript enum's values, without the reverse keys of its numeric members. */
function nativeEnumSchema(values: Readonly<Record<string, string | number>>): JsonSchema {
  const members = Object.keys(values)
    .filter((key) => typeof values[values[key] as string | number] !== "number")
    .map((key) => values[key] as string | number);
  const types = new Set(members.map((member) => typeof member));
  return types.size === 1 ? { type: types.has("string") ? "string" : "number", enum: members } : { enum: members };
}

function objectSchema(
  def: Zod3Def,
  path: readonly (string | number)[],
  inner: (child: unknown, at?: readonly (string | number)[]) => JsonSchema,
) {
  const shape = (def.shape as () => Record<string, Zod3Schema>)();
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [key, property] of Object.entries(shape)) {
    properties[key] = inner(property, [...path, key]);
    if (!isOptionalForTheModel(property)) required.push(key);
  }
  const result: JsonSchema = { type: "object", properties };
  if (required.length > 0) result.required = required;
  const catchall = def.catchall as Zod3Schema | undefined;
  if (catchall !== undefined && isZod3Schema(catchall) && catchall._def.typeName !== "ZodNever") {
    result.additionalProperties = inner(catchall, [...path, "*"]);
  } else if (def.unknownKeys === "strict") result.additionalProperties = false;
  else if (def.unknownKeys === "passthrough") result.additionalProperties = {};
  return result;
}

function arraySchema(
  def: Zod3Def,
  path: readonly (string | number)[],
  inner: (child: unknown, at?: readonly (string | number)[]) => JsonSchema,
) {
  const result: JsonSchema = { type: "array", items: inner(def.type, [...path, "[]"]) };
  const bound = (field: string): number | undefined => (def[field] as { value?: number | undefined } | null | undefined)?.value;
  const exact = bound("exactLength");
  const min = exact ?? bound("minLength");
  const max = exact ?? bound("maxLength");
  if (min !== undefined) result.minItems = min;
  if (max !== undefined) result.maxItems = max;
  return result;
}

/** A key the model may leave out: `.optional()` or `.default()`, under wrappers that keep the input. */
function isOptionalForTheModel(schema: Zod3Schema): boolean {
  let current: unknown = schema;
  for (let depth = 0; depth < 64 && isZod3Schema(current); depth++) {
    const def: Zod3Def = current._def;
    if (def.typeName === "ZodOptional" || def.typeName === "ZodDefault") return true;
    if (def.typeName === "ZodBranded") current = def.type;
    else if (def.typeName === "ZodReadonly") current = def.innerType;
    else if (def.typeName === "ZodEffects") current = def.schema;
    else if (def.typeName === "ZodPipeline") current = def.in;
    else return false;
  }
  return false;
}

function optionsOf(options: unknown): unknown[] {
  if (Array.isArray(options)) return options;
  if (options instanceof Map) return [...options.values()];
  return [];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function failure(path: readonly (string | number)[], message: string): Zod3ConversionError {
  return new Zod3ConversionError(`${formatSchemaPath(path)}: ${message}`);
}

/** `["items", "[]", "name"]` → `items[].name`; `[]` → `(root)`. */
function formatSchemaPath(path: readonly (string | number)[]): string {
  let text = "";
  for (const segment of path) {
    if (segment === "[]" || typeof segment === "number") text += segment === "[]" ? "[]" : `[${segment}]`;
    else if (segment === "*") text += "[*]";
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) text += text === "" ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text === "" ? "(root)" : text;
}
