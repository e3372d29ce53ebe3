/**
 * A canary credential and a recorder of everything that could leak it: errors
 * (message, stack, details, the whole cause chain), close reasons, URLs,
 * process output. `leaks()` lists every recorded text that contains the canary
 * in any encoding.
 */

/** Has characters that URL and form encoding change, so encoded leaks are caught too. */
export const CANARY = "CANARY-k3y+Zz/9q=tok";

/** Every form the canary could take in a text: raw, URL-encoded, form-encoded, base64. */
export function canaryForms(canary = CANARY): string[] {
  const forms = [
    canary,
    encodeURIComponent(canary),
    new URLSearchParams({ t: canary }).toString().slice(2),
    Buffer.from(canary).toString("base64").replace(/=+$/, ""),
    canary.slice(0, 12), // a prefix long enough to be unmistakable (truncated leaks)
  ];
  return [...new Set(forms)];
}

/** All texts inside an error: name, code, message, stack, details, and the same for each cause. */
export function errorTexts(error: unknown, depth = 0): string[] {
  if (depth > 10 || error === undefined || error === null) return [];
  if (!(error instanceof Error)) return [safeText(error)];
  const texts = [error.name, error.message, error.stack ?? ""];
  const record = error as Error & { code?: unknown; details?: unknown; errors?: unknown[] };
  if (record.code !== undefined) texts.push(String(record.code));
  if (record.details !== undefined) texts.push(safeText(record.details));
  for (const inner of record.errors ?? []) texts.push(...errorTexts(inner, depth + 1));
  texts.push(...errorTexts(error.cause, depth + 1));
  return texts;
}

function safeText(value: unknown): string {
  try {
    return typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    return String(value);
  }
}

export class LeakRecorder {
  readonly records: Array<{ where: string; text: string }> = [];

  text(where: string, text: string): void {
    this.records.push({ where, text });
  }

  error(where: string, error: unknown): void {
    for (const text of errorTexts(error)) this.records.push({ where, text });
  }

  /** `where: excerpt` for every record containing a canary form (empty when nothing leaked). */
  leaks(canary = CANARY): string[] {
    const forms = canaryForms(canary);
    const found: string[] = [];
    for (const { where, text } of this.records) {
      const form = forms.find((candidate) => text.includes(candidate));
      if (form === undefined) continue;
      const at = text.indexOf(form);
      found.push(`${where}: …${text.slice(Math.max(0, at - 40), at + form.length + 20)}…`);
    }
    return found;
  }

  /** Every text recorded under `where`. */
  texts(where: string): string[] {
    return this.records.filter((record) => record.where === where).map((record) => record.text);
  }

  /** How many texts were recorded under `where` (to prove the recorder saw something). */
  count(where: string): number {
    return this.records.filter((record) => record.where === where).length;
  }
}
