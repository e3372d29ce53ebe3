/**
 * Buffer text helpers for the editor tools: the content hash that makes writes
 * editor-safe, and 1-based line slicing with the ACP `line` / `limit` meaning.
 */
import { createHash } from "node:crypto";

/** Length of the hash the tools show: 16 hex characters (64 bits) of SHA-256. */
export const BUFFER_HASH_LENGTH = 16;

/** SHA-256 of the whole buffer text (UTF-8), hex, first 16 characters. */
export function bufferHash(text: string): string {
  return fullBufferHash(text).slice(0, BUFFER_HASH_LENGTH);
}

/** SHA-256 of the whole buffer text (UTF-8), all 64 hex characters. */
export function fullBufferHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * Whether `expected` (16 to 64 hex characters, any case: a prefix of the full
 * SHA-256) names `text`.
 */
export function hashMatches(expected: string, text: string): boolean {
  const wanted = expected.toLowerCase();
  if (!/^[0-9a-f]{16,64}$/.test(wanted)) return false;
  return fullBufferHash(text).startsWith(wanted);
}

/** A slice of a buffer, by lines. */
export interface BufferSlice {
  /** The selected lines, with their line terminators. */
  text: string;
  /** First line shown (1-based); `startLine > endLine` when nothing is shown. */
  startLine: number;
  /** Last line shown (1-based). */
  endLine: number;
  /** Lines in the whole buffer (a final line terminator does not start a new line). */
  totalLines: number;
}

/**
 * Lines `line` .. `line + limit - 1` of `text` (1-based; `line` defaults to 1,
 * `limit` to all the rest), like ACP's `fs/read_text_file`.
 */
export function sliceLines(text: string, line?: number, limit?: number): BufferSlice {
  const lines = text === "" ? [] : text.split(/(?<=\n)/);
  const totalLines = lines.length;
  const start = Math.max(1, line ?? 1);
  const count = limit === undefined ? Number.POSITIVE_INFINITY : Math.max(0, limit);
  const selected = lines.slice(start - 1, count === Number.POSITIVE_INFINITY ? undefined : start - 1 + count);
  return { text: selected.join(""), startLine: start, endLine: start + selected.length - 1, totalLines };
}

/** Number of lines in `text` (as {@link sliceLines} counts them). */
export function countLines(text: string): number {
  return text === "" ? 0 : text.split(/(?<=\n)/).length;
}
