/**
 * Checks `createSession` options against their schema before anything is
 * opened, spawned or looked up, and says what is wrong: one
 * `options.<path>: <problem>` line per problem, an unknown key named by its
 * own path (with the option it is probably a typo of).
 */
import type { z } from "zod/v4";
import { ToolrelayError } from "../errors.js";
import { isClientTool, type ClientTool } from "../tools/index.js";
import { flattenIssues, formatPath } from "../wire/format-issues.js";
import type { LinkSessionOptions, SessionOptions } from "./session-options.js";
import { linkSessionOptionsSchema, sessionOptionsSchema, sessionOptionsShape } from "./session-options-schema.js";

/**
 * Throw `INVALID_OPTIONS` naming every wrong option (`options.backend.environment: is required`),
 * before anything is started. The zod issues are in `details.issues`. `allowLink`: the backend may
 * be an injected link (`createSessionOnLink`).
 */
export function validateSessionOptions(options: unknown): asserts options is SessionOptions;
export function validateSessionOptions(options: unknown, allowLink: true): asserts options is LinkSessionOptions;
export function validateSessionOptions(options: unknown, allowLink = false): void {
  const checked = (allowLink ? linkSessionOptionsSchema : sessionOptionsSchema).safeParse(options);
  if (checked.success) return void checkApprover(options as SessionOptions);
  const issues = describeIssues(checked.error.issues);
  const shown = issues.slice(0, 3).join("; ");
  const more = issues.length > 3 ? `; and ${issues.length - 3} more` : "";
  throw new ToolrelayError("INVALID_OPTIONS", `invalid createSession options: ${shown}${more}`, {
    cause: checked.error,
    details: { issues },
  });
}

/** Client tools that ask first need someone to ask: a session with such a tool and no `canUseTool` is refused. */
function checkApprover(options: SessionOptions): void {
  if (options.canUseTool !== undefined) return;
  const asking = (options.tools ?? [])
    .filter((tool) => isClientTool(tool) && tool.needsApproval !== false)
    .map((tool) => (tool as ClientTool).name);
  if (asking.length === 0) return;
  throw new ToolrelayError(
    "INVALID_OPTIONS",
    `invalid createSession options: options.canUseTool: is required, because tool${asking.length > 1 ? "s" : ""} ${asking.join(", ")} ` +
      "need approval (needsApproval) and canUseTool is what answers (docs/approvals.md)",
    { details: { issues: [`options.canUseTool: is required by needsApproval (${asking.join(", ")})`] } },
  );
}

/** One `options.<path>: <problem>` line per problem; an unknown key is named by its own path. */
function describeIssues(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) lines.push(`${at([...path, key])}: is not an option${suggestion(path, key)}`);
      continue;
    }
    // A union with a message of its own (every union here has one) says it better than its closest branch.
    if (issue.code === "invalid_union" && (issue.errors.length === 0 || issue.message !== "Invalid input")) {
      lines.push(`${at(path)}: ${issue.message}`);
      continue;
    }
    for (const flat of flattenIssues([issue], prefix)) lines.push(`${at(flat.path)}: ${flat.message}`);
  }
  return lines;
}

function at(path: readonly PropertyKey[]): string {
  return path.length === 0 ? "options" : `options.${formatPath(path)}`.replace(".[", "[");
}

/** ` (did you mean "tools"?)` for a top-level key one or two edits away from a real option. */
function suggestion(path: readonly PropertyKey[], key: string): string {
  if (path.length !== 0) return "";
  const near = Object.keys(sessionOptionsShape).find((name) => editDistance(name.toLowerCase(), key.toLowerCase()) <= 2);
  return near === undefined ? "" : ` (did you mean "${near}"?)`;
}

function editDistance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let row = 1; row <= left.length; row++) {
    const current = [row];
    for (let column = 1; column <= right.length; column++) {
      const cost = left[row - 1] === right[column - 1] ? 0 : 1;
      current[column] = Math.min(previous[column]! + 1, current[column - 1]! + 1, previous[column - 1]! + cost);
    }
    previous = current;
  }
  return previous[right.length]!;
}
