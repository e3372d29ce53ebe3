/**
 * Validate tool arguments with the tool's own zod schema — the one and only
 * validator. Each failure becomes an issue with a readable path
 * (`city`, `items[2].name`, `(root)`) and zod's message, which the model gets
 * back so that it can correct the call.
 */
import { z } from "zod";
import { flattenIssues, formatPath } from "../wire/index.js";
import { errorText } from "./tool-result.js";

/** One reason the input failed the schema. */
export interface InputIssue {
  /** Where: `city`, `items[2].name`, `["odd key"]`, or `(root)` for the input itself. */
  path: string;
  /** Why, in zod's words: `Invalid input: expected string, received number`. */
  message: string;
}

export type InputValidation = { ok: true; value: unknown } | { ok: false; issues: InputIssue[] };

/**
 * Run `schema.safeParse(input)`. Never throws: a schema that throws while
 * parsing (for example an async refinement, which a synchronous parse cannot
 * run) is reported as an issue at `(root)`.
 */
export function validateToolInput(schema: z.ZodType, input: unknown): InputValidation {
  // zod copies the unknown keys of loose / passthrough / catchall objects by assignment, and
  // `out["__proto__"] = value` sets the output's PROTOTYPE: its keys would reach the tool as
  // inherited fields no schema checked. Such a key is never a legitimate argument: refuse it.
  const protoPath = findProtoKey(input);
  if (protoPath !== undefined) return { ok: false, issues: [{ path: protoPath, message: 'the key "__proto__" is not allowed' }] };
  let result: z.ZodSafeParseResult<unknown>;
  try {
    result = z.safeParse(schema, input);
  } catch (error) {
    return { ok: false, issues: [{ path: "(root)", message: `the tool's input schema failed to run: ${errorText(error)}` }] };
  }
  if (result.success) return { ok: true, value: result.data };
  const issues = flattenIssues(result.error.issues).map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
  if (issues.length === 0) issues.push({ path: "(root)", message: "Invalid input" });
  return { ok: false, issues };
}


/** The path of the first own `__proto__` key inside `input` (iterative: inputs may be deep), if any. */
function findProtoKey(input: unknown): string | undefined {
  const stack: Array<[unknown, Array<string | number>]> = [[input, []]];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push([item, [...path, index]]));
      continue;
    }
    if (Object.hasOwn(value, "__proto__")) return formatPath([...path, "__proto__"]);
    for (const [key, item] of Object.entries(value)) stack.push([item, [...path, key]]);
  }
  return undefined;
}
