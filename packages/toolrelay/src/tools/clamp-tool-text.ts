/**
 * Text clamping in the runtime's own format (docs/protocol.md#clamping; Letta
 * Code's `truncateByChars`): the head and the tail
 * of the text, a `... [N characters omitted] ...` marker between them and a
 * `[Output truncated: showing S of N characters.]` notice after them.
 *
 * One difference, on purpose: the runtime keeps 16,000 + 16,000 characters and
 * then adds its marker and notice, so its output is longer than its own limit.
 * If we did the same, the runtime would clamp our already clamped text a second
 * time (cutting into our tail and adding a second notice). So here the head,
 * the tail, the marker and the notice together fit in `maxChars`: the runtime
 * passes the text through untouched, and the model sees one clean notice.
 */
import { ToolrelayError } from "../errors.js";
import { RUNTIME_TOOL_RETURN_MAX_CHARS } from "../internal/runtime-limits.js";

/** The runtime's `TOOL_RETURN_MAX_CHARS`: text longer than this is truncated by the runtime. */
export const DEFAULT_MAX_RESULT_CHARS = RUNTIME_TOOL_RETURN_MAX_CHARS;

/**
 * Clamp `text` to at most `maxChars` UTF-16 code units (what `string.length`
 * counts, as the runtime does). Text that fits is returned unchanged. A cut
 * never splits a surrogate pair. When `maxChars` is too small for even the
 * marker and notice (under about 110 characters), the text is simply cut.
 *
 * @param maxChars - the limit, a positive integer. Default 32_000.
 */
export function clampToolText(text: string, maxChars: number = DEFAULT_MAX_RESULT_CHARS): string {
  if (text.length <= maxChars) return text;
  // Start from the budget left after the overhead for the full limit, then
  // shrink until the whole thing fits (one or two rounds: only digit counts move).
  let shown = maxChars - (truncated(text, maxChars).length - maxChars);
  while (shown > 0) {
    const candidate = truncated(text, shown);
    if (candidate.length <= maxChars) return candidate;
    shown -= Math.max(1, candidate.length - maxChars);
  }
  return text.slice(0, endBeforeSplit(text, maxChars));
}

/** The runtime's layout, showing about `shown` characters of `text`. */
function truncated(text: string, shown: number): string {
  const headLength = endBeforeSplit(text, Math.floor(shown / 2));
  const tailStart = startAfterSplit(text, text.length - Math.ceil(shown / 2));
  const head = text.slice(0, headLength);
  const tail = text.slice(tailStart);
  const shownChars = head.length + tail.length;
  const omitted = text.length - shownChars;
  return (
    `${head}\n... [${formatCount(omitted)} characters omitted] ...\n${tail}` +
    `\n\n[Output truncated: showing ${formatCount(shownChars)} of ${formatCount(text.length)} characters.]`
  );
}

/** `end`, moved back by one if it would cut a surrogate pair in two. */
function endBeforeSplit(text: string, end: number): number {
  if (end <= 0) return 0;
  return isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end)) ? end - 1 : end;
}

/** `start`, moved forward by one if it would cut a surrogate pair in two. */
function startAfterSplit(text: string, start: number): number {
  if (start >= text.length) return text.length;
  return start > 0 && isLowSurrogate(text.charCodeAt(start)) && isHighSurrogate(text.charCodeAt(start - 1)) ? start + 1 : start;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** `40000` → `40,000`, like the runtime's `toLocaleString()` in an English locale. */
export function formatCount(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Throw `INVALID_OPTIONS` unless `value` is a positive safe integer. */
export function validateMaxChars(value: unknown, name: string): asserts value is number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new ToolrelayError("INVALID_OPTIONS", `${name} must be a positive integer, got ${String(value)}`);
  }
}
