/** A socket message's JSON text as an object: `undefined` for anything else (not JSON, an array, a scalar). Never throws. */
export function parseJsonObject(data: unknown): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(String(data)) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
