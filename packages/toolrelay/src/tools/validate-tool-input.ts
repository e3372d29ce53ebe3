/**
 * Validate tool arguments with a zod schema. Each failure becomes an issue
 * with a readable path (`city`, `items[2].name`, `(root)`) and zod's message,
 * which the model gets back so that it can correct the call.
 */
import { z } from "zod/v4";
import { flattenIssues, formatPath } from "../wire/index.js";
import { findProtoKey, invalidAt, invalidWith, protoKeyRefused, type InputValidation } from "./input-issues.js";
import { errorText } from "./tool-result.js";

/**
 * Run `schema.safeParse(input)`. Never throws: a schema that throws while
 * parsing (for example an async refinement, which a synchronous parse cannot
 * run) is reported as an issue at `(root)`. A `__proto__` key anywhere in the
 * input is refused first (see `findProtoKey`).
 */
export function validateToolInput(schema: z.ZodType, input: unknown): InputValidation {
  const protoPath = findProtoKey(input);
  if (protoPath !== undefined) return protoKeyRefused(protoPath);
  let result: z.ZodSafeParseResult<unknown>;
  try {
    result = z.safeParse(schema, input);
  } catch (error) {
    return invalidAt(`the tool's input schema failed to run: ${errorText(error)}`);
  }
  if (result.success) return { ok: true, value: result.data };
  return invalidWith(flattenIssues(result.error.issues).map((issue) => ({ path: formatPath(issue.path), message: issue.message })));
}
