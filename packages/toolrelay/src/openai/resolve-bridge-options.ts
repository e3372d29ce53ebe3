/**
 * Checks {@link OpenAiBridgeOptions} before anything starts and fills in the defaults. The
 * backend, agent and session options are checked by `createSession`'s own schema (so a backend
 * kind added there is accepted here as it is); the bridge's own options by the schema below.
 */
import { z } from "zod/v4";
import { ToolrelayError } from "../errors.js";
import { DEFAULT_PERMISSION_MODE } from "../internal/permission-modes.js";
import { systemTimers, type Timers } from "../internal/timers.js";
import { validateSessionOptions } from "../session/validate-session-options.js";
import type { AgentOptions, BackendOptions } from "../session/session-options.js";
import { MAX_TOOL_TIMEOUT_MS } from "../tools/index.js";
import { formatIssues } from "../wire/format-issues.js";
import { isLoopbackHost } from "../internal/loopback-host.js";
import type { BridgeSessionOptions, BridgeWorkspace, OpenAiBridgeOptions, ToolExecution } from "./bridge-options.js";
import { THREAD_HEADER } from "./thread-headers.js";

export interface ResolvedBridgeOptions {
  backend: BackendOptions;
  agent: AgentOptions;
  toolExecution: ToolExecution;
  workspace: BridgeWorkspace;
  port: number;
  host: string;
  apiKeys: readonly string[];
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
  modelId: string;
  maxBodyBytes: number;
  maxThreads: number;
  threadIdleMs: number;
  toolResultTimeoutMs: number;
  toolNudge: ((toolNames: readonly string[]) => string) | undefined;
  maxHistoryChars: number;
  threadKeys: { header: string | undefined; metadata: string | undefined; user: boolean };
  keepAliveMs: number;
  session: BridgeSessionOptions;
  onError: (error: Error, context: { threadId?: string | undefined }) => void;
  timers: Timers;
}

/** The default nudge: which tools the client runs, and that the runtime's own cwd is empty. */
export function defaultToolNudge(toolNames: readonly string[]): string {
  return [
    `The user's chat client runs these tools for you: ${toolNames.join(", ")}.`,
    "Whenever the request needs one of them (reading or changing the user's files, running their commands), call it: the client executes the call and returns its result.",
    "Your own built-in tools work in an empty scratch directory, not in the user's workspace.",
  ].join(" ");
}

const positiveInteger = z.number({ error: "must be a number" }).int("must be an integer").positive("must be positive");
const nonNegativeInteger = z.number({ error: "must be a number" }).int("must be an integer").nonnegative("must not be negative");
const aFunction = z.custom<(...args: never[]) => unknown>((value) => typeof value === "function", { error: "must be a function" });
const nonEmpty = z.string({ error: "must be a string" }).min(1, "must not be empty");

const bridgeSchema = z.object({
  toolExecution: z.enum(["client", "runtime"], { error: 'must be "client" or "runtime"' }).optional(),
  workspace: z
    .union([z.literal("isolated"), z.literal("runtime"), z.strictObject({ cwd: nonEmpty })], {
      error: 'must be "isolated", "runtime" or { cwd }',
    })
    .optional(),
  port: nonNegativeInteger.max(65_535, "must be at most 65535").optional(),
  host: nonEmpty.optional(),
  apiKeys: z.array(nonEmpty.regex(/^\S+$/, "must not contain white space"), { error: "must be an array of strings" }).optional(),
  allowedHosts: z.array(nonEmpty, { error: "must be an array of strings" }).optional(),
  allowedOrigins: z.array(nonEmpty, { error: "must be an array of strings" }).optional(),
  modelId: nonEmpty.optional(),
  maxBodyBytes: positiveInteger.optional(),
  maxThreads: positiveInteger.optional(),
  threadIdleMs: positiveInteger.optional(),
  toolResultTimeoutMs: positiveInteger
    .max(MAX_TOOL_TIMEOUT_MS, `must be at most ${MAX_TOOL_TIMEOUT_MS} (the runtime stops waiting after 300 s)`)
    .optional(),
  toolNudge: z.union([z.string(), z.literal(false), aFunction], { error: "must be a string, false or a function" }).optional(),
  maxHistoryChars: nonNegativeInteger.optional(),
  threadKeys: z
    .strictObject({
      header: z.union([nonEmpty.regex(/^[A-Za-z0-9-]+$/, "must be a header name"), z.literal(false)]).optional(),
      metadata: z.union([nonEmpty, z.literal(false)]).optional(),
      user: z.boolean({ error: "must be a boolean" }).optional(),
    })
    .optional(),
  keepAliveMs: nonNegativeInteger.optional(),
  onError: aFunction.optional(),
});

/** Throws `INVALID_OPTIONS` naming the wrong option. */
export function resolveBridgeOptions(options: OpenAiBridgeOptions): ResolvedBridgeOptions {
  if (typeof options !== "object" || options === null) throw invalid("options must be an object");
  const { backend, agent, session = {}, timers, ...own } = options;
  const checked = bridgeSchema.safeParse(own);
  if (!checked.success) throw invalid(`invalid bridge options: ${formatIssues(checked.error.issues)}`);
  const unknown = Object.keys(own).filter((key) => !(key in bridgeSchema.shape));
  if (unknown.length > 0) throw invalid(`invalid bridge options: ${unknown.map((key) => `"${key}"`).join(", ")} is not an option`);
  for (const key of ["backend", "agent", "conversation", "tools", "workspace", "signal"]) {
    if (session !== null && typeof session === "object" && key in session)
      throw invalid(`options.session.${key} is set by the bridge itself`);
  }
  // The backend, the agent and the per-thread session options, with createSession's own checks.
  validateSessionOptions({ ...session, backend, agent });

  const toolExecution = own.toolExecution ?? "client";
  if (toolExecution === "runtime" && session.mode === undefined && session.canUseTool === undefined) {
    throw invalid(
      `toolExecution "runtime" has the agent work with the runtime's own tools (Bash, Read, Write, ...), and the default mode ("${DEFAULT_PERMISSION_MODE}") denies every call of them without a canUseTool: ` +
        'set session.mode ("unrestricted": they run unasked; "standard": the read-only ones run, the rest are denied) or session.canUseTool',
    );
  }
  const workspace = own.workspace ?? defaultWorkspace(backend, toolExecution);
  if (workspace === "isolated" && backend.kind !== "local") {
    throw invalid(
      'workspace "isolated" applies to a local backend only: a remote runtime\'s cwd is on its own machine (give { cwd } or "runtime")',
    );
  }
  const host = own.host ?? "127.0.0.1";
  const apiKeys = own.apiKeys ?? [];
  if (apiKeys.length === 0 && !isLoopbackHost(host))
    throw invalid(`host ${host} is not a loopback address: give apiKeys to expose the bridge`);
  const nudge = own.toolNudge;
  return {
    backend,
    agent,
    toolExecution,
    workspace,
    port: own.port ?? 0,
    host,
    apiKeys,
    allowedHosts: own.allowedHosts ?? [],
    allowedOrigins: own.allowedOrigins ?? [],
    modelId: own.modelId ?? "letta-code",
    maxBodyBytes: own.maxBodyBytes ?? 4 * 1024 * 1024,
    maxThreads: own.maxThreads ?? 64,
    threadIdleMs: own.threadIdleMs ?? 30 * 60_000,
    toolResultTimeoutMs: own.toolResultTimeoutMs ?? 240_000,
    toolNudge:
      nudge === false
        ? undefined
        : typeof nudge === "string"
          ? () => nudge
          : ((nudge as ((names: readonly string[]) => string) | undefined) ?? defaultToolNudge),
    maxHistoryChars: own.maxHistoryChars ?? 32_000,
    threadKeys: {
      header: own.threadKeys?.header === false ? undefined : (own.threadKeys?.header ?? THREAD_HEADER).toLowerCase(),
      metadata: own.threadKeys?.metadata === false ? undefined : (own.threadKeys?.metadata ?? "thread_id"),
      user: own.threadKeys?.user ?? false,
    },
    keepAliveMs: own.keepAliveMs ?? 15_000,
    session,
    onError: (own.onError as ResolvedBridgeOptions["onError"] | undefined) ?? (() => {}),
    timers: timers ?? systemTimers,
  };
}

function defaultWorkspace(backend: BackendOptions, toolExecution: ToolExecution): BridgeWorkspace {
  if (toolExecution === "runtime") return "runtime";
  if (backend.kind === "local") return "isolated";
  throw invalid(
    'toolExecution "client" needs an empty workspace for the runtime, and on a remote backend the bridge cannot make one: ' +
      "set workspace to { cwd } (an empty directory on the runtime's machine) or \"runtime\" (its own, when you know it holds nothing the agent could use instead of the client's tools, e.g. a fresh sandbox)",
  );
}

function invalid(message: string): ToolrelayError {
  return new ToolrelayError("INVALID_OPTIONS", message);
}
