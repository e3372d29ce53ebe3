/**
 * One line for an error and every cause under it, outermost first, each part once:
 * `relay: cannot listen on 127.0.0.1:8787: listen EADDRINUSE: address already in use
 * 127.0.0.1:8787`. A cause whose message the line already holds adds nothing; a system error code
 * (`ENOENT`) the messages do not name is added in parentheses.
 */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  let code: string | undefined;
  const seen = new Set<unknown>();
  for (let current: unknown = error; current !== undefined && current !== null && !seen.has(current); current = causeOf(current)) {
    seen.add(current);
    // "Connection error." inside a line reads "Connection error: ...".
    const message = messageOf(current).replace(/\.$/, "");
    if (message !== "" && !parts.some((part) => part.includes(message))) parts.push(message);
    code ??= systemCodeOf(current);
  }
  const line = parts.join(": ") || "unknown error";
  return code !== undefined && !line.includes(code) ? `${line} (${code})` : line;
}

function messageOf(value: unknown): string {
  if (value instanceof Error) return value.message.trim();
  return typeof value === "string" ? value.trim() : String(value);
}

function causeOf(value: unknown): unknown {
  return value instanceof Error ? value.cause : undefined;
}

/** `EADDRINUSE`, `ECONNREFUSED`, `ENOENT`, …: a Node system error's code. */
function systemCodeOf(value: unknown): string | undefined {
  const code = (value as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}
