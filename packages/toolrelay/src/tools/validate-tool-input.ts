/**
 * Validate tool arguments with a zod schema, zod 4 or zod 3. Each failure becomes an issue
 * with a readable path (`city`, `items[2].name`, `(root)`) and zod's message,
 * which the model gets back so that it can correct the call.
 */
import { z } from "zod/v4";
import { flattenIssues, formatPath } from "../wire/index.js";
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
import type { Zod3SafeParseResult, Zod3Schema } from "./zod3-json-schema.js";

/**
 * Run `schema.safeParse(input)`. Never throws: a schema that throws while
 * parsing (for example an async refinement, which a synchronous parse cannot
 * run) is reported as an issue at `(root)`. A `__proto__` key anywhere in the
 * input is refused first (see `findProtoKey`).
 */
export function validateToolInput(schema: z.ZodType, input: unknown, role: SchemaRole = "input"): InputValidation {
  const protoPath = findProtoKey(input);
  if (protoPath !== undefined) return protoKeyRefused(protoPath);
  let result: z.ZodSafeParseResult<unknown>;
  try {
    result = z.safeParse(schema, input);
  } catch (error) {
    return invalidAt(`the tool's ${role} schema failed to run: ${errorText(error)}`);
  }
  if (result.success) return { ok: true, value: result.data };
  return invalidWith(flattenIssues(result.error.issues).map((issue) => ({ path: formatPath(issue.path), message: issue.message })));
}

/**
 * The same for a zod 3 schema (`schema.safeParse(input)`): an `invalid_union` becomes the issues
 * of its closest variant, as for zod 4.
 */
export function validateZod3Input(schema: Zod3Schema, input: unknown, role: SchemaRole = "input"): InputValidation {
  const protoPath = findProtoKey(input);
  if (protoPath !== undefined) return protoKeyRefused(protoPath);
  let result: Zod3SafeParseResult;
  try {
    result = schema.safeParse(input);
  } catch (error) {
    return invalidAt(`the tool's ${role} schema failed to run: ${errorText(error)}`);
  }
  if (result.success) return { ok: true, value: result.data };
  return invalidWith(zod3Issues(result.error.issues, []));
}

type Zod3Issue = {
  path: ReadonlyArray<string | number>;
  message: string;
  code?: string | undefined;
  unionErrors?: ReadonlyArray<{ issues: Zod3Issue[] }> | undefined;
};

function zod3Issues(issues: readonly Zod3Issue[], prefix: ReadonlyArray<string | number>): InputIssue[] {
  return issues.flatMap((issue): InputIssue[] => {
    const branches = issue.code === "invalid_union" ? (issue.unionErrors ?? []) : [];
    if (branches.length === 0) return [{ path: formatPath([...prefix, ...issue.path]), message: issue.message }];
    // The variant that came closest (fewest issues; the first on a tie). Its paths are absolute already.
    const closest = branches.reduce((best, branch) => (branch.issues.length < best.issues.length ? branch : best));
    return zod3Issues(closest.issues, []);
  });
}
