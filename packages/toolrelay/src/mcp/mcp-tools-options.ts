/**
 * Options of `mcpTools()`: where the server is (a command to start, or a
 * Streamable HTTP URL), and the bounds of its calls. Explicit configuration
 * only: there is no default server, no config file is read, and nothing of
 * this process's environment reaches a child unless named.
 */
import { ToolrelayError } from "../errors.js";
import { MAX_TOOL_TIMEOUT_MS } from "../tools/index.js";

/** One tool as the MCP server lists it (the fields `filter` may look at). */
export interface McpToolInfo {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown> | undefined;
}

/**
 * Which of an MCP server's tools ask before each call (see {@link McpCommonOptions.approval}):
 * `"never"`, `"destructive"`, `"always"`, or a function of the tool as listed that returns `true`
 * for a tool whose calls must be approved.
 */
export type McpApprovalPolicy = "never" | "destructive" | "always" | ((tool: McpToolInfo) => boolean);

/** Options of both kinds of MCP server (stdio and Streamable HTTP). */
export interface McpCommonOptions {
  /** Names the server in errors and events. Default: the command's file name, or the URL's host. */
  name?: string | undefined;
  /**
   * Put before every tool name, e.g. `"fs_"` → `fs_read_text_file`: letters,
   * digits, `_` and `-`, at most 32 characters. Characters of an MCP tool name
   * the runtime does not accept (`.`, `/`, ...) become `_`. Also what keeps a
   * server's tool named like one of the runtime's own (`Read`, `Bash`, ...)
   * from replacing it: such a name fails the start (`INVALID_TOOL_DEFINITION`),
   * and is left out, with an `error` event, when a later listing brings it.
   * Default `""`.
   */
  prefix?: string | undefined;
  /** Deadline of one `tools/call`, in ms: an integer in 1–300_000. On expiry MCP's cancellation is sent. Default 60_000. */
  callTimeoutMs?: number | undefined;
  /** Deadline to start: spawn or connect, `initialize`, and list every page of tools, in ms. Default 30_000. */
  startTimeoutMs?: number | undefined;
  /** Which of the server's tools to offer (called on every listing). Default: all of them. */
  filter?: ((tool: McpToolInfo) => boolean) | undefined;
  /**
   * Which of the server's tools ask before each call (their `needsApproval`): the session's
   * `canUseTool` answers (`kind: "client-tool"`, with the tool's annotations); a call not approved
   * is not sent to the server, and the model reads that it was not run. A session without
   * `canUseTool` is not refused for it (the tools are listed after the session is made): such a
   * call is denied (`no-approver`).
   * - `"never"`: no tool asks.
   * - `"destructive"`: a tool asks unless its annotations say `readOnlyHint: true` or
   *   `destructiveHint: false` — so an unannotated tool asks, as MCP's defaults make it one that
   *   may perform destructive updates (`readOnlyHint` false, `destructiveHint` true).
   * - `"always"`: every tool asks.
   * - a function of the tool as the server lists it (its MCP `name`, `annotations`, ...), called on
   *   every listing: `true` to ask. One that throws or returns no boolean fails the listing
   *   (`INVALID_TOOL_DEFINITION` naming the tool).
   *
   * Default `"never"`: the app chose this server, as it chose its own `defineTool` tools (which
   * ask only when their `needsApproval` says so), and MCP's annotations are hints that a server
   * may leave out or get wrong, so they are not taken as a reason to stop a tool that worked
   * before. For a server the app does not control, say `"destructive"` or `"always"`.
   */
  approval?: McpApprovalPolicy | undefined;
}

/** A server started as a child process, spoken to over stdio. */
export interface McpStdioOptions extends McpCommonOptions {
  /** The executable, looked up on `PATH`. Required. */
  command: string;
  /** Its arguments. Default `[]`. */
  args?: readonly string[] | undefined;
  /**
   * The child's environment. Only these variables and `PATH` (on Windows also
   * `SYSTEMROOT`, `PATHEXT`, `COMSPEC`, `TEMP`, `TMP`, `SYSTEMDRIVE`, `WINDIR`)
   * are set: nothing else of this process is inherited. Name what the server
   * needs, e.g. `{ HOME: process.env.HOME! }` for `npx`. Default `{}`.
   */
  env?: Readonly<Record<string, string>> | undefined;
  /** The child's working directory. Default: this process's. */
  cwd?: string | undefined;
}

/** A server reached over MCP Streamable HTTP. */
export interface McpHttpOptions extends McpCommonOptions {
  /** The server's MCP endpoint, `http:` or `https:`. Required. */
  url: string | URL;
  /** Sent with every request (e.g. `Authorization`). Default `{}`. */
  headers?: Readonly<Record<string, string>> | undefined;
}

/** `mcpTools`'s options: a server to start (`command`) or one to reach (`url`). */
export type McpToolsOptions = McpStdioOptions | McpHttpOptions;

/** The options after checking, with defaults filled in. */
export type ResolvedMcpOptions =
  | (ResolvedCommon & { kind: "stdio"; command: string; args: string[]; env: Record<string, string>; cwd: string | undefined })
  | (ResolvedCommon & { kind: "http"; url: URL; headers: Record<string, string> });

interface ResolvedCommon {
  name: string;
  prefix: string;
  callTimeoutMs: number;
  startTimeoutMs: number;
  filter: ((tool: McpToolInfo) => boolean) | undefined;
  /** The `approval` policy as a function (`"never"` → always `false`). */
  needsApproval: (tool: McpToolInfo) => boolean;
}

const COMMON_KEYS = ["name", "prefix", "callTimeoutMs", "startTimeoutMs", "filter", "approval"];
const APPROVAL_POLICIES = ["never", "destructive", "always"];
const STDIO_KEYS = new Set([...COMMON_KEYS, "command", "args", "env", "cwd"]);
const HTTP_KEYS = new Set([...COMMON_KEYS, "url", "headers"]);

/** Check `options`; throws `ToolrelayError("INVALID_OPTIONS")` naming the option. */
export function resolveMcpOptions(options: McpToolsOptions): ResolvedMcpOptions {
  if (typeof options !== "object" || options === null) fail("mcpTools() needs options: { command, args, env } or { url, headers }");
  const record = options as unknown as Record<string, unknown>;
  const hasCommand = record.command !== undefined;
  const hasUrl = record.url !== undefined;
  if (hasCommand === hasUrl) fail("mcpTools() takes either command (a stdio server) or url (a Streamable HTTP server), exactly one");
  const allowed = hasCommand ? STDIO_KEYS : HTTP_KEYS;
  const unknown = Object.keys(record).filter((key) => !allowed.has(key));
  if (unknown.length > 0) fail(`mcpTools(): unknown option${unknown.length > 1 ? "s" : ""} ${unknown.map((key) => `"${key}"`).join(", ")}`);
  const common = resolveCommon(record);
  if (hasCommand) {
    const { command, args, env, cwd } = record;
    if (typeof command !== "string" || command.trim() === "") fail("mcpTools(): command must be a non-empty string");
    if (args !== undefined && !(Array.isArray(args) && args.every((item) => typeof item === "string")))
      fail("mcpTools(): args must be an array of strings");
    if (cwd !== undefined && (typeof cwd !== "string" || cwd === "")) fail("mcpTools(): cwd must be a non-empty string");
    return {
      kind: "stdio",
      ...common,
      name: common.name || baseName(command),
      command,
      args: [...((args as string[] | undefined) ?? [])],
      env: stringRecord(env, "env"),
      cwd: cwd as string | undefined,
    };
  }
  let url: URL;
  try {
    url = new URL(String(record.url));
  } catch {
    return fail(`mcpTools(): url ${JSON.stringify(String(record.url))} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") fail(`mcpTools(): url must be http: or https:, got ${url.protocol}`);
  return { kind: "http", ...common, name: common.name || url.host, url, headers: stringRecord(record.headers, "headers") };
}

function resolveCommon(record: Record<string, unknown>): ResolvedCommon {
  const { name, prefix, callTimeoutMs, startTimeoutMs, filter, approval } = record;
  if (name !== undefined && (typeof name !== "string" || name.trim() === "")) fail("mcpTools(): name must be a non-empty string");
  if (prefix !== undefined && (typeof prefix !== "string" || !/^[a-zA-Z0-9_-]{0,32}$/.test(prefix))) {
    fail('mcpTools(): prefix must be at most 32 letters, digits, "_" or "-"');
  }
  if (callTimeoutMs !== undefined && !isIntegerIn(callTimeoutMs, 1, MAX_TOOL_TIMEOUT_MS)) {
    fail(
      `mcpTools(): callTimeoutMs must be an integer in 1-${MAX_TOOL_TIMEOUT_MS} (the runtime waits 300 s at most), got ${String(callTimeoutMs)}`,
    );
  }
  if (startTimeoutMs !== undefined && !isIntegerIn(startTimeoutMs, 1, 2_147_483_647)) {
    fail(`mcpTools(): startTimeoutMs must be a positive integer, got ${String(startTimeoutMs)}`);
  }
  if (filter !== undefined && typeof filter !== "function") fail("mcpTools(): filter must be a function");
  if (approval !== undefined && typeof approval !== "function" && !APPROVAL_POLICIES.includes(approval as string)) {
    fail(
      `mcpTools(): approval must be "never", "destructive", "always" or a function of the tool, got ${
        typeof approval === "string" ? JSON.stringify(approval) : approval === null ? "null" : typeof approval
      }`,
    );
  }
  return {
    name: (name as string | undefined) ?? "",
    prefix: (prefix as string | undefined) ?? "",
    callTimeoutMs: (callTimeoutMs as number | undefined) ?? 60_000,
    startTimeoutMs: (startTimeoutMs as number | undefined) ?? 30_000,
    filter: filter as ResolvedCommon["filter"],
    needsApproval: approvalPolicy((approval as McpApprovalPolicy | undefined) ?? "never"),
  };
}

/** The policy as a function of the listed tool. */
function approvalPolicy(policy: McpApprovalPolicy): (tool: McpToolInfo) => boolean {
  switch (policy) {
    case "never":
      return () => false;
    case "always":
      return () => true;
    case "destructive":
      return mayBeDestructive;
    default:
      return policy;
  }
}

/** MCP's reading of a tool's annotations: destructive unless it says `readOnlyHint: true` or `destructiveHint: false` (MCP's defaults: false, true). */
function mayBeDestructive(tool: McpToolInfo): boolean {
  const annotations = typeof tool.annotations === "object" && tool.annotations !== null ? tool.annotations : {};
  return annotations.readOnlyHint !== true && annotations.destructiveHint !== false;
}

function stringRecord(value: unknown, option: string): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(`mcpTools(): ${option} must be an object of strings`);
  const result: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== "string") fail(`mcpTools(): ${option}.${key} must be a string`);
    result[key] = item;
  }
  return result;
}

function isIntegerIn(value: unknown, min: number, max: number): boolean {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}

function baseName(command: string): string {
  return command.split(/[\\/]/).pop() || command;
}

function fail(message: string): never {
  throw new ToolrelayError("INVALID_OPTIONS", message);
}
