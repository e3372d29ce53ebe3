/**
 * The editor's message log, made stable for a fixture (temporary paths, UUIDs
 * and runtime message ids replaced by placeholders) and summarized as one line
 * per message for assertions.
 */
import type { EditorLogEntry } from "./test-editor.js";

export interface NormalizeOptions {
  /** Literal strings to replace (longest first), e.g. the temporary workspace → `/workspace`. */
  replace: Record<string, string>;
}

/** The log with placeholders: every UUID becomes `<id-N>`, every runtime message id `<msg-N>`, in order of appearance. */
export function normalizeLog(entries: readonly EditorLogEntry[], options: NormalizeOptions): EditorLogEntry[] {
  let text = JSON.stringify(entries);
  for (const [from, to] of Object.entries(options.replace).sort((a, b) => b[0].length - a[0].length)) {
    text = text.split(from).join(to);
  }
  const ids = new Map<string, string>();
  text = text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
    if (!ids.has(id)) ids.set(id, `<id-${ids.size + 1}>`);
    return ids.get(id)!;
  });
  const messages = new Map<string, string>();
  text = text.replace(/\b(?:ui-msg|letta-msg)-\d+/g, (id) => {
    if (!messages.has(id)) messages.set(id, `<msg-${messages.size + 1}>`);
    return messages.get(id)!;
  });
  return JSON.parse(text) as EditorLogEntry[];
}

/** One line per message: `in  session/update tool_call_update in_progress`, `out response #3`, ... */
export function logShape(entries: readonly EditorLogEntry[]): string[] {
  return entries.map(({ direction, message }) => {
    const arrow = direction === "in" ? "agent→editor" : "editor→agent";
    const fields = message as {
      id?: unknown;
      method?: string;
      params?: Record<string, unknown>;
      result?: unknown;
      error?: { code: number };
    };
    if (typeof fields.method === "string") {
      if (fields.method === "session/update") {
        const update = fields.params?.update as { sessionUpdate: string; status?: string } | undefined;
        return `${arrow} session/update ${update?.sessionUpdate}${update?.status ? ` ${update.status}` : ""}`;
      }
      return `${arrow} ${fields.method}${"id" in fields ? " (request)" : ""}`;
    }
    if (fields.error) return `${arrow} error ${fields.error.code}`;
    return `${arrow} result`;
  });
}
