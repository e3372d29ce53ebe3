/**
 * How a tool call looks in the editor: the ACP `title`, `kind` (the editor
 * picks an icon from it) and `locations` ("follow the agent"). Known for the
 * editor tools and Letta Code's built-in tools. Any other tool is titled with
 * its annotations' `title` (else its name) and its kind comes from its
 * annotations' hints: `readOnlyHint` → `read`, `destructiveHint` → `edit`
 * (ACP's `edit` is "modifying content"; `delete` would claim the tool removes
 * something, which a destructive hint does not say), otherwise `other`.
 */
import type { ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import type { ToolAnnotations } from "../tools/index.js";

/** How a tool call is shown in the editor (ACP `tool_call` fields). */
export interface ToolCallPresentation {
  title: string;
  kind: ToolKind;
  locations: ToolCallLocation[];
}

/**
 * Decides the presentation of a call from its tool name and input (the input may be missing or
 * malformed) and, for a client tool, its annotations (`undefined` when not known: a runtime tool,
 * or a call seen only in the turn's events).
 */
export type ToolCallPresenter = (toolName: string, input: unknown, annotations?: Readonly<ToolAnnotations>) => ToolCallPresentation;

const KIND_BY_TOOL: Readonly<Record<string, ToolKind>> = {
  read_editor_buffer: "read",
  write_via_editor: "edit",
  Read: "read",
  read_file: "read",
  view: "read",
  Write: "edit",
  Edit: "edit",
  MultiEdit: "edit",
  ApplyPatch: "edit",
  apply_patch: "edit",
  write_file: "edit",
  replace: "edit",
  Bash: "execute",
  BashOutput: "execute",
  KillBash: "execute",
  run_shell_command: "execute",
  ShellCommand: "execute",
  Grep: "search",
  Glob: "search",
  LS: "search",
  list_directory: "search",
  search_file_content: "search",
  WebFetch: "fetch",
  fetch_webpage: "fetch",
  WebSearch: "fetch",
  web_search: "fetch",
  TodoWrite: "think",
};

/** The default presenter. */
export const presentToolCall: ToolCallPresenter = (toolName, input, annotations) => {
  const fields = typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  const kind = KIND_BY_TOOL[toolName] ?? kindFromAnnotations(annotations);
  const path = firstString(fields, ["path", "file_path", "absolute_path", "filePath"]);
  const line = typeof fields.line === "number" && Number.isInteger(fields.line) && fields.line > 0 ? fields.line : undefined;
  const locations: ToolCallLocation[] = path?.startsWith("/") ? [{ path, ...(line !== undefined ? { line } : {}) }] : [];
  if (toolName === "read_editor_buffer") return { title: path ? `Read ${path} (editor buffer)` : "Read editor buffer", kind, locations };
  if (toolName === "write_via_editor")
    return { title: path ? `Write ${path} (through the editor)` : "Write through the editor", kind, locations };
  const command = firstString(fields, ["command", "cmd"]);
  const pattern = firstString(fields, ["pattern", "query", "url"]);
  const detail = kind === "execute" ? command : (path ?? pattern);
  const name = annotations?.title !== undefined && annotations.title.trim() !== "" ? truncate(annotations.title, 120) : toolName;
  return { title: detail !== undefined ? `${name}: ${truncate(detail, 120)}` : name, kind, locations };
};

/** A tool the table above does not know: its hints, if any, say what it does. */
function kindFromAnnotations(annotations: Readonly<ToolAnnotations> | undefined): ToolKind {
  if (annotations?.readOnlyHint === true) return "read";
  if (annotations?.destructiveHint === true) return "edit";
  return "other";
}

function firstString(fields: Record<string, unknown>, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = fields[name];
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
}

function truncate(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
