/**
 * What a tool callback may return, and how that value becomes the
 * `result.content` of an `external_tool_call_response`.
 *
 * The runtime (docs/protocol.md#external_tool_call_response) keeps only `{type:"text",text}` and
 * `{type:"image",data,mimeType}` parts and drops every other part without a
 * word; without an image it joins the texts with `"\n"`; then it clamps text to
 * 32,000 characters (docs/protocol.md#clamping). `normalizeToolResult` applies the same rules on
 * this side, so that nothing is dropped silently and the model sees exactly
 * what the SDK reports.
 */
import type { WireContentBlock } from "../wire/index.js";
import { binaryResultOf, describeBinary, isBinaryData } from "./binary-result.js";
import { clampToolText, DEFAULT_MAX_RESULT_CHARS, validateMaxChars } from "./clamp-tool-text.js";

/** A tool result with explicit content blocks, and `isError: true` for a failure the model should read. */
export interface ToolResult {
  /** Text and image blocks, in order. */
  content: WireContentBlock[];
  /** `true` marks the result as a tool error (the model sees the content with status `error`). Default `false`. */
  isError?: boolean | undefined;
}

/**
 * A returned object: anything but a function or a promise-like value. Plain
 * objects, arrays and class instances are all fine; they are sent as JSON.
 */
export type ToolReturnObject = object & {
  readonly [Symbol.hasInstance]?: never | undefined;
  readonly then?: never | undefined;
};

/**
 * What `execute` may return (or resolve to):
 * - a `string` — sent as one text block;
 * - a {@link ToolResult} (`{ content, isError? }`) or an array of content blocks — sent as they are;
 * - `undefined` (or nothing) — sent as the text `(no output)`;
 * - a `Buffer`, `Uint8Array` or `ArrayBuffer` holding a PNG, JPEG, GIF or WebP image — sent as
 *   that image (other bytes are a tool error saying what to return instead);
 * - any other JSON value — sent as `JSON.stringify(value, null, 2)`.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: `void` lets `async execute() {}` (Promise<void>) type-check
export type ToolReturnValue = string | number | boolean | null | undefined | void | readonly unknown[] | ToolReturnObject;

/** The normalized form: the blocks to send, and whether they describe a tool error. */
export interface NormalizedToolResult {
  content: WireContentBlock[];
  isError: boolean;
}

export interface NormalizeToolResultOptions {
  /**
   * Text longer than this is clamped like the runtime does (head and tail
   * kept, a marker in the middle, a notice at the end), so that the clamped
   * text, notice included, never exceeds this many characters. Default
   * 32_000 (the runtime's own limit).
   */
  maxTextChars?: number | undefined;
}

/** The text sent for a result without any text (`undefined`, `""`, `[]`). */
export const NO_OUTPUT_TEXT = "(no output)";

/** `{ content: [{ type: "text", text }] }`. */
export function textResult(text: string): ToolResult {
  return { content: [{ type: "text", text }] };
}

/** `{ content: [{ type: "text", text: message }], isError: true }`: a failure the model reads. */
export function errorResult(message: string): ToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/**
 * Turn whatever a tool returned into wire content blocks. Never throws for
 * any `value`: a value that cannot be sent (a cycle, a BigInt, a function,
 * an invalid content block) becomes an error result that says why. Throws
 * (`ToolrelayError` `INVALID_OPTIONS`) only for an invalid `maxTextChars`.
 *
 * Rules, in order:
 * - `string` → one text block (`""` → `(no output)`);
 * - `undefined` → `(no output)`;
 * - an `Error` instance → an error result with its message;
 * - binary data (`Buffer`, `Uint8Array`, `ArrayBuffer`) → an image block when its first bytes
 *   are a PNG, JPEG, GIF or WebP file's, else an error result saying what to return (see
 *   `binary-result.ts`); binary data inside an object or array is an error result too;
 * - a non-empty array whose every item is an object with `type` `"text"` or
 *   `"image"` → content blocks (each must be valid);
 * - an object with exactly `content` (an array) and optionally `isError` →
 *   a {@link ToolResult} (every block must be valid; `isError` a boolean);
 * - anything else → `JSON.stringify(value, null, 2)`.
 *
 * Without images, the texts are joined with `"\n"` into one block (as the
 * runtime would) and clamped; with images, each text block is clamped on its
 * own and images pass through.
 */
export function normalizeToolResult(value: unknown, options: NormalizeToolResultOptions = {}): NormalizedToolResult {
  const maxTextChars = options.maxTextChars ?? DEFAULT_MAX_RESULT_CHARS;
  validateMaxChars(maxTextChars, "maxTextChars");
  try {
    return normalizeValue(value, maxTextChars);
  } catch (error) {
    // A getter or proxy that throws while we read the value.
    return failure(`Tool result could not be read: ${errorText(error)}`, maxTextChars);
  }
}

function normalizeValue(value: unknown, maxTextChars: number): NormalizedToolResult {
  if (typeof value === "string") return normalizedText(value, false, maxTextChars);
  if (value === undefined) return fromBlocks([], false, maxTextChars);
  if (value instanceof Error) return failure(errorText(value), maxTextChars);
  if (isBinaryData(value)) {
    const binary = binaryResultOf(value);
    return binary.ok ? fromBlocks([binary.block], false, maxTextChars) : failure(binary.reason, maxTextChars);
  }
  if (Array.isArray(value) && looksLikeContentBlocks(value)) {
    return fromUncheckedBlocks(value, false, maxTextChars);
  }
  if (isToolResultShape(value)) {
    const isError: unknown = value.isError;
    if (isError !== undefined && typeof isError !== "boolean") {
      return failure(`Tool returned an invalid result: "isError" must be a boolean, got ${typeName(isError)}.`, maxTextChars);
    }
    return fromUncheckedBlocks(value.content, isError === true, maxTextChars);
  }
  const json = serializeJson(value);
  if (!json.ok) return failure(`Tool result could not be converted to JSON: ${json.reason}.`, maxTextChars);
  return fromBlocks(json.text === undefined ? [] : [{ type: "text", text: json.text }], false, maxTextChars);
}

/** An error result with one (clamped) text block. */
function failure(message: string, maxTextChars: number): NormalizedToolResult {
  return { content: [{ type: "text", text: clampToolText(message, maxTextChars) }], isError: true };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function looksLikeContentBlocks(items: readonly unknown[]): boolean {
  return items.length > 0 && items.every((item) => isRecord(item) && (item.type === "text" || item.type === "image"));
}

function isToolResultShape(value: unknown): value is { content: unknown[]; isError?: unknown } {
  if (!isRecord(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  const keys = Object.keys(value);
  if (!keys.includes("content") || !keys.every((key) => key === "content" || key === "isError")) return false;
  return Array.isArray(value.content);
}

/** Check every block; copy only the fields the wire allows. */
function fromUncheckedBlocks(items: readonly unknown[], isError: boolean, maxTextChars: number): NormalizedToolResult {
  const blocks: WireContentBlock[] = [];
  const problems: string[] = [];
  items.forEach((item, index) => {
    const checked = checkBlock(item);
    if (typeof checked === "string") problems.push(`block ${index} ${checked}`);
    else blocks.push(checked);
  });
  if (problems.length > 0) {
    const shown = problems.slice(0, 5).join("; ");
    const more = problems.length > 5 ? `; and ${problems.length - 5} more` : "";
    return failure(
      `Tool returned invalid content: ${shown}${more}. ` +
        `Only {type:"text",text} and {type:"image",data,mimeType} blocks can reach the model.`,
      maxTextChars,
    );
  }
  return fromBlocks(blocks, isError, maxTextChars);
}

/** A valid block (copied), or what is wrong with it. */
function checkBlock(item: unknown): WireContentBlock | string {
  if (!isRecord(item)) return `is ${typeName(item)}, not a content block object`;
  if (item.type === "text") {
    return typeof item.text === "string" ? { type: "text", text: item.text } : `(text) needs a string "text", got ${typeName(item.text)}`;
  }
  if (item.type === "image") {
    const { data, mimeType } = item;
    if (isBinaryData(data)) {
      return `(image) needs base64 "data" as a non-empty string, got ${describeBinary(data)} (encode it: Buffer.from(bytes).toString("base64"))`;
    }
    if (typeof data !== "string" || data === "") return `(image) needs base64 "data" as a non-empty string`;
    if (typeof mimeType !== "string" || !mimeType.startsWith("image/")) {
      return `(image) needs a "mimeType" such as "image/png"`;
    }
    return { type: "image", data, mimeType };
  }
  return typeof item.type === "string"
    ? `has unsupported type ${JSON.stringify(item.type)} (use "text" or "image")`
    : `has no "type" (use "text" or "image")`;
}

/** Text results are one (clamped) text block; no text at all says so. */
function normalizedText(text: string, isError: boolean, maxTextChars: number): NormalizedToolResult {
  return { content: [{ type: "text", text: text === "" ? NO_OUTPUT_TEXT : clampToolText(text, maxTextChars) }], isError };
}

/** Join or clamp valid blocks the way the runtime will read them. */
function fromBlocks(blocks: readonly WireContentBlock[], isError: boolean, maxTextChars: number): NormalizedToolResult {
  if (!blocks.some((block) => block.type === "image")) {
    return normalizedText(blocks.map((block) => (block.type === "text" ? block.text : "")).join("\n"), isError, maxTextChars);
  }
  const content = blocks.map(
    (block): WireContentBlock => (block.type === "text" ? { type: "text", text: clampToolText(block.text, maxTextChars) } : block),
  );
  return { content, isError };
}

type JsonText = { ok: true; text: string | undefined } | { ok: false; reason: string };

/** `JSON.stringify(value, null, 2)` that reports what it cannot represent instead of dropping it. */
function serializeJson(value: unknown): JsonText {
  // A function, not an arrow: `this` is the holder, whose `this[key]` is the value before its
  // `toJSON` ran (a Buffer's toJSON turns it into `{ type: "Buffer", data: [...] }`).
  const replacer = function (this: unknown, key: string, item: unknown): unknown {
    const where = key === "" ? "" : ` (at key ${JSON.stringify(key)})`;
    const original: unknown = typeof this === "object" && this !== null ? (this as Record<string, unknown>)[key] : item;
    if (isBinaryData(original)) {
      throw new UnsupportedValue(
        `it contains ${describeBinary(original)}${where}, which JSON would send as a list of numbers; ` +
          'return an image as its own block ({ type: "image", data: <base64>, mimeType }) or turn the bytes into text',
      );
    }
    if (typeof item === "function") throw new UnsupportedValue(`it contains a function${where}`);
    if (typeof item === "symbol") throw new UnsupportedValue(`it contains a symbol${where}`);
    if (typeof item === "bigint") throw new UnsupportedValue(`it contains a BigInt${where}; convert it to a string or number`);
    if (item instanceof Map || item instanceof Set) {
      throw new UnsupportedValue(`it contains a ${item instanceof Map ? "Map" : "Set"}${where}, which JSON would send as {}`);
    }
    return item;
  };
  try {
    const text: string | undefined = JSON.stringify(value, replacer, 2);
    return { ok: true, text };
  } catch (error) {
    if (error instanceof UnsupportedValue) return { ok: false, reason: error.message };
    const message = errorText(error);
    if (/circular/i.test(message)) return { ok: false, reason: "it contains a circular reference" };
    return { ok: false, reason: message };
  }
}

class UnsupportedValue extends Error {}

/** The message of a thrown value, without ever throwing itself. */
export function errorText(error: unknown): string {
  try {
    if (typeof error === "string") return error === "" ? "(empty error message)" : error;
    if (typeof error === "object" && error !== null) {
      const message: unknown = (error as { message?: unknown }).message;
      if (typeof message === "string" && message !== "") return message;
      if (error instanceof Error) return error.name || "Error";
      const json = JSON.stringify(error);
      if (typeof json === "string" && json !== "{}") return json;
    }
    return String(error);
  } catch {
    return "(the thrown value could not be converted to text)";
  }
}

function typeName(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  const kind = typeof value;
  return kind === "object" ? "an object" : `a ${kind}`;
}
