/**
 * JSON parsing for untrusted input. Never throws; rejects documents nested
 * deeper than `maxDepth` before `JSON.parse` sees them (so a 10,000-level
 * document costs one linear scan), and returns objects whose `__proto__` keys
 * are plain own properties (JSON.parse already does that; we never merge).
 */
export type JsonParseResult = { ok: true; value: unknown } | { ok: false; error: string };

/** Default depth limit for frames and tool inputs. */
export const DEFAULT_MAX_JSON_DEPTH = 256;

export function parseJson(text: string, maxDepth = DEFAULT_MAX_JSON_DEPTH): JsonParseResult {
  // Nesting deeper than maxDepth needs more than maxDepth opening brackets (so a text at least that
  // long): most frames are shorter, or have a handful, counted with native searches, and skip the
  // character-by-character scan.
  if (text.length > maxDepth && !fewOpeners(text, maxDepth) && measureJsonDepth(text, maxDepth) > maxDepth) {
    return { ok: false, error: `JSON nested deeper than ${maxDepth} levels` };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: `invalid JSON: ${(error as Error).message}` };
  }
}

/** Whether `text` has at most `limit` `{` and `[` characters in all (strings included). */
function fewOpeners(text: string, limit: number): boolean {
  let count = 0;
  for (const opener of ["{", "["]) {
    for (let index = text.indexOf(opener); index !== -1; index = text.indexOf(opener, index + 1)) if (++count > limit) return false;
  }
  return true;
}

/**
 * The bracket depth of a JSON text, counting only brackets outside strings.
 * Stops counting once `limit` is exceeded.
 */
export function measureJsonDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 92 /* \ */) index++;
      else if (code === 34 /* " */) inString = false;
      continue;
    }
    if (code === 34) inString = true;
    else if (code === 123 /* { */ || code === 91 /* [ */) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (code === 125 /* } */ || code === 93 /* ] */) depth--;
  }
  return deepest;
}

/**
 * `JSON.stringify` that never throws (cycles, BigInt) and reports failure as
 * `undefined`.
 */
export function stringifyJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
