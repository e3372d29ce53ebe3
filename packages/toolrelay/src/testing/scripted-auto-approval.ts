/**
 * Which proposed tool calls the scripted runtime runs without a `can_use_tool`
 * question, per permission mode — a narrow model of Letta Code 0.32.18's own
 * classification (its `approval_classification_end.auto_allowed_tool_call_ids`):
 *
 * - `unrestricted`: every call runs unasked.
 * - `strict`: every call is asked.
 * - `standard`: a client tool is always asked; a runtime tool is not asked when it is read-only:
 *   `Read`, `Glob`, `Grep`, `LS`, `TodoWrite`, or a `Bash` whose `command` is ONE plain read-only
 *   command (`READ_ONLY_SHELL_COMMANDS`: `echo hi`, `ls`, `pwd`, `cat notes.txt` …) with no shell
 *   operator, no substitution, no absolute, home or `..` path argument.
 * - `acceptEdits`: as `standard`, and the runtime's file edits (`Write`, `Edit`, `MultiEdit`,
 *   `NotebookEdit`) run unasked too.
 *
 * The real runtime auto-allows more (pipelines of safe commands, `git status`, `sed` without
 * `-i`, paths under allowed roots, …); this model stays narrow on purpose: a call it does not
 * know is asked, so a test never depends on a guess about the real classifier.
 */
import type { ScriptedPermissionMode } from "./scripted-runtime-types.js";

/** Whose tool a proposed call is: the app's (`external_tools`) or the runtime's own (Bash, Read, …). */
export type ProposedToolKind = "client" | "runtime";

/** Runtime tools that only read, run unasked in `standard` and `acceptEdits` (as the real runtime's default decision). */
export const READ_ONLY_RUNTIME_TOOLS: ReadonlySet<string> = new Set(["Read", "Glob", "Grep", "LS", "TodoWrite"]);

/** Runtime tools that edit files, run unasked in `acceptEdits` (the real runtime's mode override). */
export const EDIT_RUNTIME_TOOLS: ReadonlySet<string> = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"]);

/** The first word of a `Bash` command that makes it read-only (a subset of the real runtime's always-safe list). */
export const READ_ONLY_SHELL_COMMANDS: ReadonlySet<string> = new Set([
  "echo",
  "printf",
  "ls",
  "pwd",
  "cat",
  "head",
  "tail",
  "wc",
  "date",
  "whoami",
  "true",
]);

/** Shell syntax that makes a command more than one plain command: operators, redirections, substitutions, globs of variables. */
const SHELL_SYNTAX = /[;&|<>`$(){}\n\\]/;

/** An argument naming a path outside the working directory: absolute, home-anchored, or climbing with `..`. */
const OUTSIDE_PATH = /^(\/|~)|(^|\/)\.\.(\/|$)/;

/** True when the scripted runtime runs this proposed call without asking, in `mode`. */
export function runsUnasked(mode: ScriptedPermissionMode, kind: ProposedToolKind, name: string, input: Record<string, unknown>): boolean {
  if (mode === "unrestricted") return true;
  if (mode === "strict" || kind === "client") return false;
  if (READ_ONLY_RUNTIME_TOOLS.has(name)) return true;
  if (mode === "acceptEdits" && EDIT_RUNTIME_TOOLS.has(name)) return true;
  return name === "Bash" && isReadOnlyShellCommand(input.command);
}

/** One plain read-only command: a known first word, no shell syntax, no path outside the working directory (quotes aside). */
export function isReadOnlyShellCommand(command: unknown): boolean {
  if (typeof command !== "string" || SHELL_SYNTAX.test(command)) return false;
  const [first, ...args] = command.trim().split(/\s+/);
  return (
    first !== undefined && READ_ONLY_SHELL_COMMANDS.has(first) && !args.some((arg) => OUTSIDE_PATH.test(arg.replace(/^["']|["']$/g, "")))
  );
}
