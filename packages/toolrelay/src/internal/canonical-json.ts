/**
 * JSON with object keys sorted at every level, so that equal inputs have one text whatever their
 * key order; its UTF-8 length is the input's size. Joined, not concatenated, so the text is flat (no
 * rope kept alive by a digest). Inputs come from a decoded frame (depth-capped, no cycles). An object
 * whose keys are already in order and whose values are all strings, numbers, booleans or null (most
 * tool inputs) is one `JSON.stringify`: the same text.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return ["[", value.map(canonicalJson).join(","), "]"].join("");
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 0) return "{}";
  if (isSortedAndFlat(keys, record)) return JSON.stringify(record);
  const members = keys.sort().map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return ["{", members.join(","), "}"].join("");
}

function isSortedAndFlat(keys: readonly string[], record: Record<string, unknown>): boolean {
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    if (index > 0 && !(keys[index - 1]! < key)) return false;
    const member = record[key];
    const kind = typeof member;
    if (member !== null && kind !== "string" && kind !== "number" && kind !== "boolean") return false;
  }
  return true;
}
