/**
 * A plain JSON object: not an array, not null, not a class instance (Date,
 * Map...). Checked by prototype, not with `z.record`: zod's plain-object test
 * reads `value.constructor`, so a JSON object with its own `"constructor"` key
 * (a legitimate tool argument name) would be rejected. Nothing is copied.
 */
import { z } from "zod/v4";

export type JsonObject = Record<string, unknown>;

/** True for `{...}` from JSON.parse or an object literal (prototype `Object.prototype` or `null`). */
export function isJsonObject(value: unknown): value is JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

export const jsonObjectSchema = z.custom<JsonObject>(isJsonObject, { message: "Invalid input: expected a plain object" });
