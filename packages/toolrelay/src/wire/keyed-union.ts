/**
 * A union of object schemas keyed by one string property, with a fallback for
 * key values it does not know.
 *
 * `z.discriminatedUnion` rejects an unknown discriminator value; the runtime
 * adds new delta `message_type`s and content part `type`s over time, and an
 * unknown one must never make a whole frame invalid. `keyedUnion` dispatches like a
 * discriminated union (a known value is checked against exactly its own
 * schema, so errors name the real field), and keeps any other value as a
 * loose object.
 */
import { z } from "zod/v4";
import { flattenIssues } from "./format-issues.js";

/** What `keyedUnion` keeps for a key value it has no schema for. */
export type UnknownKeyed<TKey extends string> = { [P in TKey]: string } & { [key: string]: unknown };

/** An object schema whose `key` property is a `z.literal` (one or more values). */
type KeyedOption = z.ZodObject;

/**
 * Build the keyed union. Every option must declare `key` as a `z.literal`.
 * The returned schema requires an object with a string `key`; an object whose
 * `key` is one of the options' literals must also satisfy that option.
 *
 * The value produced by parsing is the loose copy of the input (no option
 * transforms anything), so it has exactly the input's properties.
 */
export function keyedUnion<TKey extends string, const TOptions extends readonly KeyedOption[]>(
  key: TKey,
  options: TOptions,
): z.ZodType<z.output<TOptions[number]> | UnknownKeyed<TKey>> {
  const byValue = new Map<string, KeyedOption>();
  for (const option of options) {
    const keySchema: unknown = option.shape[key];
    if (!(keySchema instanceof z.ZodLiteral)) {
      throw new TypeError(`keyedUnion: every option needs a literal "${key}"`);
    }
    for (const value of keySchema.values) {
      if (typeof value !== "string") throw new TypeError(`keyedUnion: "${key}" literals must be strings`);
      if (byValue.has(value)) throw new TypeError(`keyedUnion: duplicate "${key}" value "${value}"`);
      byValue.set(value, option);
    }
  }
  const base = z.looseObject({ [key]: z.string() } as Record<TKey, z.ZodString>);
  const schema = base.superRefine((value, context) => {
    const option = byValue.get(value[key] as string);
    if (option === undefined) return;
    const result = option.safeParse(value);
    if (result.success) return;
    for (const issue of flattenIssues(result.error.issues)) {
      context.addIssue({ code: "custom", message: issue.message, path: issue.path });
    }
  });
  return schema as unknown as z.ZodType<z.output<TOptions[number]> | UnknownKeyed<TKey>>;
}

/** The literal key values a keyed union knows, for type guards. */
export function knownKeyValues(key: string, options: readonly KeyedOption[]): ReadonlySet<string> {
  const values = new Set<string>();
  for (const option of options) {
    const keySchema: unknown = option.shape[key];
    if (keySchema instanceof z.ZodLiteral) {
      for (const value of keySchema.values) if (typeof value === "string") values.add(value);
    }
  }
  return values;
}
