/**
 * The sidecar's diagnostics: one line per event on stderr, only with
 * `--debug`. A line carries what happened and identifiers — frame types, ids,
 * tool names, sizes, error codes — never a payload: no prompt, tool input or
 * result, message text or credential goes through here (callers pass only
 * such fields, and every value is clipped and stripped of control characters).
 */

/** A field value of a diagnostics line. */
export type DiagnosticValue = string | number | boolean | null | undefined;

export interface Diagnostics {
  /** `false` when nothing is written (no `--debug`). */
  readonly enabled: boolean;
  log(event: string, fields?: Record<string, DiagnosticValue>): void;
}

/** Longest field value written; longer ones are clipped. */
const MAX_VALUE_CHARS = 80;

/** Diagnostics that write lines through `write`, or none at all without it. */
export function createDiagnostics(write: ((line: string) => void) | undefined): Diagnostics {
  if (write === undefined) return { enabled: false, log: () => undefined };
  return {
    enabled: true,
    log(event, fields = {}) {
      const parts = [`toolrelay-sidecar ${new Date().toISOString()} ${event}`];
      for (const [key, value] of Object.entries(fields)) {
        if (value === undefined) continue;
        parts.push(`${key}=${clean(String(value))}`);
      }
      try {
        write(`${parts.join(" ")}\n`);
      } catch {
        // Diagnostics never break the sidecar.
      }
    },
  };
}

function clean(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point.
  const printable = value.replace(/[\u0000-\u001f\u007f\s]+/g, "_");
  return printable.length > MAX_VALUE_CHARS ? `${printable.slice(0, MAX_VALUE_CHARS)}…` : printable;
}
