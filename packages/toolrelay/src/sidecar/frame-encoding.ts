/**
 * Frame bodies: UTF-8 JSON (the default) or MessagePack (`--encoding msgpack`,
 * through `@msgpack/msgpack`). Decoding never throws: a body that is not
 * valid UTF-8, not JSON / MessagePack, nested deeper than 256 levels, or
 * holds a value JSON cannot hold (MessagePack binary, extension types, a
 * `__proto__` key) is reported as an error string, and the sidecar answers it
 * with an error frame and goes on.
 *
 * Both encodings carry the same JSON data model, so a frame means the same in
 * either: JSON bodies are `JSON.stringify` output (compact, keys in insertion
 * order); MessagePack bodies use the smallest integer and string formats and
 * float64 for non-integers, and leave out `undefined` object fields (as JSON does).
 */
import { Decoder, Encoder } from "@msgpack/msgpack";
import { DEFAULT_MAX_JSON_DEPTH, parseJson } from "../internal/safe-json.js";

/** How frame bodies are encoded. */
export type SidecarEncoding = "json" | "msgpack";

export const SIDECAR_ENCODINGS: readonly SidecarEncoding[] = ["json", "msgpack"];

/** A decoded body, or why it could not be decoded (no payload in the reason). */
export type DecodedBody = { ok: true; value: unknown } | { ok: false; error: string };

/** Encodes and decodes frame bodies of one encoding. */
export interface BodyCodec {
  readonly encoding: SidecarEncoding;
  encode(value: unknown): Uint8Array;
  decode(body: Uint8Array): DecodedBody;
}

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const jsonCodec: BodyCodec = {
  encoding: "json",
  encode(value) {
    const text = JSON.stringify(value);
    if (typeof text !== "string") throw new TypeError("a frame must be a JSON value");
    return utf8.encode(text);
  },
  decode(body) {
    if (body.length === 0) return { ok: false, error: "empty frame body" };
    let text: string;
    try {
      text = strictUtf8.decode(body);
    } catch {
      return { ok: false, error: "the body is not valid UTF-8" };
    }
    return parseJson(text, DEFAULT_MAX_JSON_DEPTH);
  },
};

function msgpackCodec(): BodyCodec {
  // Deeper than any frame can be: tool inputs are at most 256 levels deep (the SDK's limit).
  const encoder = new Encoder({ ignoreUndefined: true, maxDepth: 1_024 });
  const decoder = new Decoder();
  return {
    encoding: "msgpack",
    encode(value) {
      return encoder.encode(value);
    },
    decode(body) {
      if (body.length === 0) return { ok: false, error: "empty frame body" };
      let value: unknown;
      try {
        value = decoder.decode(body);
      } catch (error) {
        // The decoder's messages name formats and keys, never values.
        return { ok: false, error: `invalid MessagePack: ${error instanceof Error ? error.message : String(error)}` };
      }
      const problem = jsonModelProblem(value, DEFAULT_MAX_JSON_DEPTH);
      return problem === undefined ? { ok: true, value } : { ok: false, error: problem };
    },
  };
}

/** The codec of `encoding`. */
export function bodyCodec(encoding: SidecarEncoding): BodyCodec {
  return encoding === "json" ? jsonCodec : msgpackCodec();
}

/**
 * Why a decoded MessagePack value is not a JSON value, or `undefined`. Iterative
 * (no recursion), so a deeply nested body cannot exhaust the stack.
 */
export function jsonModelProblem(root: unknown, maxDepth: number): string | undefined {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: root, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (value === null || typeof value === "string" || typeof value === "boolean") continue;
    if (typeof value === "number") {
      if (!Number.isFinite(value)) return "a number that JSON cannot hold (NaN or infinite)";
      continue;
    }
    if (typeof value !== "object") return `a ${typeof value} value, which JSON cannot hold`;
    if (depth >= maxDepth) return `nested deeper than ${maxDepth} levels`;
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, depth: depth + 1 });
      continue;
    }
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return "binary, extension or timestamp data, which JSON cannot hold";
    for (const item of Object.values(value)) stack.push({ value: item, depth: depth + 1 });
  }
  return undefined;
}
