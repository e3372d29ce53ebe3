/**
 * The value schemas the option schemas are built of (a non-empty string, a
 * positive number, a function, an injected `Timers`, logger or tracer), each
 * with the message an `INVALID_OPTIONS` error shows for a wrong value.
 */
import { z } from "zod/v4";

/** The zod shape of an options type: `satisfies Shape<T>` fails to compile when an option of `T` is missing. */
export type Shape<T> = Record<keyof T, z.ZodType>;

/** `undefined` → "is required", anything else → `otherwise`. */
export const requiredOr = (otherwise: string) => (issue: { input?: unknown }) => (issue.input === undefined ? "is required" : otherwise);

/** `true` for any function (a callback, a class such as `WebSocket`). */
export const isFunction = (value: unknown): boolean => typeof value === "function";
/** A callback or constructor option. */
export const functionSchema = z.custom<(...args: never[]) => unknown>(isFunction, { error: "must be a function" });
/** A string with something in it besides white space. */
export const nonEmptyString = z
  .string({ error: requiredOr("must be a string") })
  .trim()
  .min(1, { error: "must not be empty" });
/** A finite number > 0 (durations in ms, sizes). */
export const positiveNumber = z
  .number({ error: "must be a number" })
  .finite({ error: "must be finite" })
  .positive({ error: "must be > 0" });
/** A finite number >= 0 (0 turns the feature off). */
export const nonNegativeNumber = z
  .number({ error: "must be a number" })
  .finite({ error: "must be finite" })
  .min(0, { error: "must be >= 0" });
/** A whole number >= 0. */
export const nonNegativeInteger = z
  .number({ error: "must be a number" })
  .int({ error: "must be an integer" })
  .min(0, { error: "must be 0 or more" });
/** A whole number > 0. */
export const positiveInteger = z
  .number({ error: "must be a number" })
  .int({ error: "must be an integer" })
  .positive({ error: "must be > 0" });
/** Header-like `{ name: value }` strings. */
export const stringRecord = z.record(z.string(), z.string({ error: "must be a string" }), { error: "must be an object of strings" });

/** An injected `Timers` (`setTimeout`, `clearTimeout`, `now`). */
/** A call journal: `kind` and the five methods of `CallJournal` (calls/call-journal.ts). */
export const journalSchema = z.custom<unknown>(
  (value) =>
    typeof value === "object" &&
    value !== null &&
    typeof (value as Record<string, unknown>).kind === "string" &&
    ["find", "start", "settle", "alias", "close"].every((name) => isFunction((value as Record<string, unknown>)[name])),
  {
    error:
      "must be a call journal (kind, find, start, settle, alias, close): openFileCallJournal(), openNatsCallJournal() or a MemoryCallJournal",
  },
);
export const timersSchema = z.custom<unknown>(
  (value) =>
    typeof value === "object" &&
    value !== null &&
    ["setTimeout", "clearTimeout", "now"].every((name) => isFunction((value as Record<string, unknown>)[name])),
  { error: "must have setTimeout, clearTimeout and now functions" },
);

/** A pino-shaped logger. */
export const loggerSchema = z.custom<unknown>(
  (value) =>
    typeof value === "object" &&
    value !== null &&
    ["debug", "info", "warn", "error"].every((name) => isFunction((value as Record<string, unknown>)[name])),
  { error: "must have debug, info, warn and error functions (pino's shape)" },
);

/** An OpenTelemetry tracer, or `false` for none. */
export const tracerSchema = z.custom<unknown>(
  (value) => value === false || (typeof value === "object" && value !== null && isFunction((value as Record<string, unknown>).startSpan)),
  { error: "must be an OpenTelemetry tracer (with startSpan) or false" },
);
