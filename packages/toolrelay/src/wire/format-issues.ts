/**
 * Turn zod issues into one short, readable line that names the failing path,
 * e.g. `result.content[0].text: Invalid input: expected string, received number`.
 * Messages name types and keys only, never the values (which may be tool
 * inputs or results).
 */
import type { z } from "zod/v4";

/** One concrete problem at one path (unions resolved to their closest variant). */
export interface WireIssue {
  path: PropertyKey[];
  message: string;
}

type ZodIssue = z.core.$ZodIssue;

/**
 * Flatten zod issues: an `invalid_union` whose variants all failed is replaced
 * by the issues of the variant that came closest (fewest issues; the first on
 * a tie), with paths made absolute.
 */
export function flattenIssues(issues: readonly ZodIssue[], prefix: readonly PropertyKey[] = []): WireIssue[] {
  const flat: WireIssue[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === "invalid_union" && issue.errors.length > 0) {
      let closest = issue.errors[0] ?? [];
      for (const branch of issue.errors) if (branch.length < closest.length) closest = branch;
      flat.push(...flattenIssues(closest, path));
      continue;
    }
    if (issue.code === "invalid_union") {
      flat.push({ path, message: "Invalid input: no variant has this value" });
      continue;
    }
    flat.push({ path, message: issue.message });
  }
  return flat;
}

/** `["result", "content", 0, "text"]` → `result.content[0].text`; `[]` → `(root)`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (typeof segment === "string" && /^[A-Za-z_$][\w$]*$/.test(segment)) {
      text += text === "" ? segment : `.${segment}`;
    } else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text === "" ? "(root)" : text;
}

/** One line: the first `limit` issues as `path: message`, joined with `; `. */
export function formatIssues(issues: readonly ZodIssue[], limit = 3): string {
  const flat = flattenIssues(issues);
  const shown = flat.slice(0, limit).map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
  const more = flat.length - shown.length;
  return more > 0 ? `${shown.join("; ")}; and ${more} more` : shown.join("; ");
}
