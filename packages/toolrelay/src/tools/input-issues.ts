/**
 * The result of validating one tool input, whatever the schema kind (zod,
 * Standard Schema, JSON Schema): the value the callback gets, or the failing
 * paths in words the model can act on.
 */
import { formatPath } from "../wire/index.js";

/** One reason the input failed the schema. */
export interface InputIssue {
  /** Where: `city`, `items[2].name`, `["odd key"]`, or `(root)` for the input itself. */
  path: string;
  /** Why, in the validator's words, e.g. `Invalid input: expected string, received number`. */
  message: string;
}

/** `ok` with the value `execute` receives, or every issue found. */
export type InputValidation = { ok: true; value: unknown } | { ok: false; issues: InputIssue[] };

/** Which schema of a tool is checking a value: its `inputSchema` or its `outputSchema` (the words of a failure say which). */
export type SchemaRole = "input" | "output";

/** A validation that failed with one issue at `path` (default `(root)`). */
export function invalidAt(message: string, path = "(root)"): InputValidation {
  return { ok: false, issues: [{ path, message }] };
}

/** `{ ok: false }` with these issues, or one generic issue when the validator gave none. */
export function invalidWith(issues: InputIssue[]): InputValidation {
  return { ok: false, issues: issues.length > 0 ? issues : [{ path: "(root)", message: "Invalid input" }] };
}

/**
 * The path of the first own `__proto__` key inside `input` (iterative: inputs
 * may be deep), if any. Validators that build their output by assignment (zod,
 * valibot) turn `out["__proto__"] = value` into a PROTOTYPE change: the key's
 * fields would reach the tool as inherited properties no schema checked. Such
 * a key is never a legitimate argument, so those validators refuse it first.
 */
export function findProtoKey(input: unknown): string | undefined {
  // A walk that builds no paths first (every call's input is walked; a `__proto__` key is rare).
  if (typeof input !== "object" || input === null) return undefined;
  const stack: unknown[] = [input];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) for (const item of value) stack.push(item);
    else if (Object.hasOwn(value, "__proto__")) return protoKeyPath(input);
    else for (const key in value) if (Object.hasOwn(value, key)) stack.push((value as Record<string, unknown>)[key]);
  }
  return undefined;
}

/** The path of the first own `__proto__` key (its walk keeps each value's path). */
function protoKeyPath(input: unknown): string | undefined {
  const stack: Array<[unknown, Array<string | number>]> = [[input, []]];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        stack.push([item, [...path, index]]);
      });
      continue;
    }
    if (Object.hasOwn(value, "__proto__")) return formatPath([...path, "__proto__"]);
    for (const [key, item] of Object.entries(value)) stack.push([item, [...path, key]]);
  }
  return undefined;
}

/** The issue for a `__proto__` key found by {@link findProtoKey}. */
export function protoKeyRefused(path: string): InputValidation {
  return invalidAt('the key "__proto__" is not allowed', path);
}
