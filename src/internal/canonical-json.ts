/**
 * JSON with object keys sorted at every level, so that equal inputs have one text whatever their
 * key order; its UTF-8 length is the input's size. Joined, not concatenated, so the text is flat (no
 * rope kept alive by a digest). Inputs come from a decoded frame (depth-capped, no cycles).
 */
export function canonicalJson(value: unknown): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return ["[", value.map(canonicalJson).join(","), "]"].join("");
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return ["{", members.join(","), "}"].join("");
}
