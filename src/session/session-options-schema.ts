/**
 * `createSession` options as one zod schema, checked before anything is
 * opened, spawned or looked up. Every object is strict, so a typo (`tool:`)
 * is refused like a wrong value; every problem is reported as
 * `INVALID_OPTIONS` with the path of the option that is wrong.
 *
 * The shapes are tied to the public option types with `satisfies`: an option
 * added to a type and forgotten here does not compile.
 */
import { z } from "zod";
import type { CloudBackendOptions } from "../backends/cloud-backend.js";
import {
  GITHUB_COMMIT,
  GITHUB_OWNER,
  GITHUB_REPO,
  MAX_GITHUB_REPOSITORIES,
  SANDBOX_TTL_MINUTES,
  type CloudSandboxOptions,
  type GithubRepository,
} from "../backends/cloud-sandbox-options.js";
import type { LocalBackendOptions } from "../backends/local-backend.js";
import type { SpawnLettaServerOptions } from "../backends/spawn-letta-server.js";
import { ToolrelayError } from "../errors.js";
import type { BackoffOptions } from "../transport/backoff.js";
import { flattenIssues, formatPath } from "../wire/format-issues.js";
import type { LinkSessionOptions, SessionOptions } from "./session-options.js";

type Shape<T> = Record<keyof T, z.ZodType>;

/** `undefined` → "is required", anything else → `otherwise`. */
const requiredOr = (otherwise: string) => (issue: { input?: unknown }) => (issue.input === undefined ? "is required" : otherwise);

const isFunction = (value: unknown): boolean => typeof value === "function";
const functionSchema = z.custom<(...args: never[]) => unknown>(isFunction, { error: "must be a function" });
const nonEmptyString = z
  .string({ error: requiredOr("must be a string") })
  .trim()
  .min(1, { error: "must not be empty" });
const positiveNumber = z.number({ error: "must be a number" }).finite({ error: "must be finite" }).positive({ error: "must be > 0" });
const nonNegativeNumber = z.number({ error: "must be a number" }).finite({ error: "must be finite" }).min(0, { error: "must be >= 0" });
const nonNegativeInteger = z
  .number({ error: "must be a number" })
  .int({ error: "must be an integer" })
  .min(0, { error: "must be 0 or more" });
const positiveInteger = z.number({ error: "must be a number" }).int({ error: "must be an integer" }).positive({ error: "must be > 0" });
const stringRecord = z.record(z.string(), z.string({ error: "must be a string" }), { error: "must be an object of strings" });

const timersSchema = z.custom<unknown>(
  (value) =>
    typeof value === "object" &&
    value !== null &&
    ["setTimeout", "clearTimeout", "now"].every((name) => isFunction((value as Record<string, unknown>)[name])),
  { error: "must have setTimeout, clearTimeout and now functions" },
);

const loggerSchema = z.custom<unknown>(
  (value) =>
    typeof value === "object" &&
    value !== null &&
    ["debug", "info", "warn", "error"].every((name) => isFunction((value as Record<string, unknown>)[name])),
  { error: "must have debug, info, warn and error functions (pino's shape)" },
);

const tracerSchema = z.custom<unknown>(
  (value) => value === false || (typeof value === "object" && value !== null && isFunction((value as Record<string, unknown>).startSpan)),
  { error: "must be an OpenTelemetry tracer (with startSpan) or false" },
);

const backoffSchema = z.strictObject(
  {
    initialDelayMs: positiveNumber.optional(),
    maxDelayMs: positiveNumber.optional(),
    factor: z.number({ error: "must be a number" }).min(1, { error: "must be >= 1" }).optional(),
    random: functionSchema.optional(),
  } satisfies Shape<BackoffOptions>,
  { error: "must be an object" },
);

const spawnSchema = z.strictObject(
  {
    command: nonEmptyString.optional(),
    commandArgs: z.array(z.string({ error: "must be a string" }), { error: "must be an array of strings" }).optional(),
    listen: nonEmptyString.optional(),
    env: z.record(z.string(), z.string().optional(), { error: "must be an object of strings" }).optional(),
    cwd: nonEmptyString.optional(),
    startupTimeoutMs: positiveNumber.optional(),
  } satisfies Shape<SpawnLettaServerOptions>,
  { error: "must be true or an object" },
);

const localBackendSchema = z
  .strictObject({
    kind: z.literal("local"),
    url: nonEmptyString.optional(),
    spawn: z.union([z.literal(true), spawnSchema], { error: "must be true or an object" }).optional(),
    token: z.string({ error: "must be a string" }).optional(),
    headers: stringRecord.optional(),
    reconnect: z.boolean({ error: "must be a boolean" }).optional(),
    backoff: backoffSchema.optional(),
    connectTimeoutMs: positiveNumber.optional(),
    pingIntervalMs: nonNegativeNumber.optional(),
    pongTimeoutMs: nonNegativeNumber.optional(),
    maxPayload: positiveInteger.optional(),
    WebSocket: functionSchema.optional(),
  } satisfies Shape<LocalBackendOptions>)
  .refine((backend) => (backend.url === undefined) !== (backend.spawn === undefined), {
    error: 'backend { kind: "local" } needs exactly one of `url` (a running app-server) or `spawn` (start `letta server --listen`)',
  });

/** `{ connectionId }`, `{ name }`, `{ id }` or `{ deviceId }`: exactly one, a non-empty string. */
const environmentSchema = z
  .strictObject(
    {
      connectionId: nonEmptyString.optional(),
      name: nonEmptyString.optional(),
      id: nonEmptyString.optional(),
      deviceId: nonEmptyString.optional(),
    },
    { error: "must be { connectionId }, { name }, { id } or { deviceId }" },
  )
  .refine((selector) => Object.values(selector).filter((value) => value !== undefined).length === 1, {
    error: "needs exactly one of connectionId, name, id or deviceId",
  });

const githubRepositorySchema = z.strictObject(
  {
    owner: z
      .string({ error: requiredOr("must be a string") })
      .regex(GITHUB_OWNER, { error: "must be a GitHub user or organisation (1-39 letters, digits or inner hyphens)" }),
    repo: z
      .string({ error: requiredOr("must be a string") })
      .regex(GITHUB_REPO, { error: "must be a GitHub repository name (1-100 letters, digits, '.', '_' or '-')" }),
    commit: z.string({ error: requiredOr("must be a string") }).regex(GITHUB_COMMIT, { error: "must be a full 40-hex-digit commit SHA" }),
  } satisfies Shape<GithubRepository>,
  { error: "must be { owner, repo, commit }" },
);

/** An SDK-managed sandbox: `{}` takes every default. */
const sandboxSchema = z.strictObject(
  {
    createRoute: z.enum(["agent", "sandboxes"], { error: 'must be "agent" or "sandboxes"' }).optional(),
    sandboxClass: z.enum(["linux-vm", "container"], { error: 'must be "linux-vm" or "container"' }).optional(),
    githubRepositories: z
      .array(githubRepositorySchema, { error: "must be an array of { owner, repo, commit }" })
      .max(MAX_GITHUB_REPOSITORIES, { error: `takes at most ${MAX_GITHUB_REPOSITORIES} repositories` })
      .refine(
        (repositories) => new Set(repositories.map((entry) => `${entry.owner}/${entry.repo}`.toLowerCase())).size === repositories.length,
        {
          error: "names a repository twice",
        },
      )
      .optional(),
    ttlMinutes: z
      .number({ error: "must be a number" })
      .int({ error: "must be a whole number of minutes" })
      .min(SANDBOX_TTL_MINUTES.min, { error: `must be ${SANDBOX_TTL_MINUTES.min}-${SANDBOX_TTL_MINUTES.max} minutes` })
      .max(SANDBOX_TTL_MINUTES.max, { error: `must be ${SANDBOX_TTL_MINUTES.min}-${SANDBOX_TTL_MINUTES.max} minutes` })
      .optional(),
    readyTimeoutMs: positiveNumber.optional(),
    readyPollIntervalMs: positiveNumber.optional(),
    refreshIntervalMs: positiveNumber.optional(),
    terminateOnClose: z.boolean({ error: "must be a boolean" }).optional(),
  } satisfies Shape<CloudSandboxOptions>,
  { error: "must be an object (`{}` for every default)" },
);

/**
 * What a cloud session attaches to: exactly one of these keys. A new target
 * is one more optional key in the shape below and one more name here; the
 * check that exactly one is given stays as it is.
 */
const CLOUD_TARGETS = ["environment", "sandbox"] as const;

const cloudBackendSchema = z
  .strictObject({
    kind: z.literal("cloud"),
    apiKey: z.string({ error: "must be a string" }).optional(),
    baseUrl: z.url({ error: "must be an http(s) URL", protocol: /^https?$/ }).optional(),
    environment: environmentSchema.optional(),
    sandbox: sandboxSchema.optional(),
    headers: stringRecord.optional(),
    auth: z.enum(["header", "query"], { error: 'must be "header" or "query"' }).optional(),
    pingIntervalMs: nonNegativeNumber.optional(),
    pongTimeoutMs: nonNegativeNumber.optional(),
    WebSocket: functionSchema.optional(),
    backoff: backoffSchema.optional(),
    connectTimeoutMs: positiveNumber.optional(),
    maxPayload: positiveInteger.optional(),
    restMaxRetries: z
      .number({ error: "must be a number" })
      .int({ error: "must be an integer" })
      .min(0, { error: "must be >= 0" })
      .optional(),
    restTimeoutMs: positiveNumber.optional(),
    timers: timersSchema.optional(),
  } satisfies Shape<CloudBackendOptions>)
  .superRefine((backend, context) => {
    const given = CLOUD_TARGETS.filter((target) => backend[target] !== undefined);
    if (given.length === 1) return;
    const names = CLOUD_TARGETS.map((target) => `\`${target}\``).join(" or ");
    context.addIssue({
      code: "custom",
      path: given.length === 0 ? [CLOUD_TARGETS[0]] : [],
      message: given.length === 0 ? `is required: the cloud backend needs ${names}` : `takes only one of ${names}`,
    });
  });

const linkBackendSchema = z.strictObject({
  kind: z.literal("link"),
  link: z.custom<unknown>(
    (value) =>
      typeof value === "object" &&
      value !== null &&
      ["connect", "send", "close", "on"].every((name) => isFunction((value as Record<string, unknown>)[name])),
    { error: "must be a RuntimeLink (connect, send, close, on)" },
  ),
});

const backendSchema = z.discriminatedUnion("kind", [localBackendSchema, cloudBackendSchema], {
  error: (issue) =>
    issue.input === undefined
      ? 'is required: { kind: "local", url }, { kind: "cloud", environment } or { kind: "cloud", sandbox }'
      : 'must be "local" or "cloud"',
});

/** `createSessionOnLink` only: the public backends, or an injected link. */
const linkOrBackendSchema = z.discriminatedUnion("kind", [localBackendSchema, cloudBackendSchema, linkBackendSchema], {
  error: (issue) =>
    issue.input === undefined
      ? 'is required: { kind: "local", url }, { kind: "cloud", environment } or { kind: "cloud", sandbox }'
      : 'must be "local", "cloud" or "link"',
});

const agentSchema = z
  .strictObject(
    {
      /** Attach to an existing agent. */
      id: nonEmptyString.optional(),
      /** Create one. */
      create: z.looseObject({ model: nonEmptyString, name: nonEmptyString.optional() }, { error: "must be an object" }).optional(),
    },
    { error: requiredOr("must be { id } or { create: { model } }") },
  )
  .superRefine((agent, context) => {
    const given = [agent.id, agent.create].filter((value) => value !== undefined).length;
    if (given === 1) return;
    context.addIssue({
      code: "custom",
      path: [],
      message: given === 0 ? "needs { id } or { create: { model } }" : "takes either id or create, not both",
    });
  });

const sessionOptionsShape = {
  backend: backendSchema,
  agent: agentSchema,
  conversation: nonEmptyString.optional(),
  tools: z
    .array(
      z.custom<unknown>((value) => typeof value === "object" && value !== null, { error: "must be a tool made with defineTool" }),
      {
        error: "must be an array of tools made with defineTool",
      },
    )
    .optional(),
  mode: z
    .enum(["standard", "acceptEdits", "unrestricted", "strict"], { error: 'must be "standard", "acceptEdits", "unrestricted" or "strict"' })
    .optional(),
  canUseTool: functionSchema.optional(),
  toolTimeoutMs: positiveInteger.max(300_000, { error: "must be at most 300000 (the runtime stops waiting after 300 s)" }).optional(),
  maxInputBytes: positiveInteger.optional(),
  maxResultChars: positiveInteger.optional(),
  reconnectGraceMs: nonNegativeInteger.optional(),
  maxConcurrentCalls: positiveInteger.optional(),
  callLimits: z
    .strictObject(
      {
        maxCachedCalls: positiveInteger.optional(),
        maxCachedChars: positiveInteger.optional(),
        cacheAgeMs: positiveInteger.optional(),
        maxForgottenCalls: nonNegativeInteger.optional(),
        forgottenAgeMs: positiveInteger.optional(),
        maxHeldChars: positiveInteger.optional(),
        resendWindowMs: nonNegativeInteger.optional(),
        maxRequestIdChars: positiveInteger.optional(),
        maxToolCallIdChars: positiveInteger.optional(),
        maxToolNameChars: positiveInteger.optional(),
      } satisfies Shape<NonNullable<SessionOptions["callLimits"]>>,
      { error: "must be an object" },
    )
    .optional(),
  requestTimeoutMs: positiveNumber.optional(),
  workspace: z
    .union([z.literal("isolated"), z.strictObject({ cwd: nonEmptyString })], { error: 'must be "isolated" or { cwd: "/absolute/path" }' })
    .optional(),
  reassertToolsEachTurn: z.boolean({ error: "must be a boolean" }).optional(),
  turnStallProbeMs: nonNegativeNumber.optional(),
  signal: z.custom<unknown>((value) => value instanceof AbortSignal, { error: "must be an AbortSignal" }).optional(),
  clientInfo: z
    .strictObject(
      {
        name: nonEmptyString,
        title: z.string({ error: "must be a string" }).optional(),
        version: z.string({ error: "must be a string" }).optional(),
      },
      { error: "must be an object" },
    )
    .optional(),
  timers: timersSchema.optional(),
  logger: loggerSchema.optional(),
  logPayloads: z.boolean({ error: "must be a boolean" }).optional(),
  tracer: tracerSchema.optional(),
} satisfies Shape<SessionOptions>;

/** The rules across options: an isolated workspace is local only; a sandbox made for an agent needs the agent's id. */
function refineSessionOptions(
  options: { workspace?: unknown; backend: { kind: string; sandbox?: { createRoute?: string } | undefined }; agent: object },
  context: z.RefinementCtx,
): void {
  if (options.workspace === "isolated" && options.backend.kind === "cloud") {
    context.addIssue({
      code: "custom",
      path: ["workspace"],
      message: '"isolated" applies to the local backend only: a cloud runtime\'s cwd is on its own machine',
    });
  }
  const sandbox = options.backend.kind === "cloud" ? options.backend.sandbox : undefined;
  if (sandbox && (sandbox.createRoute ?? "agent") === "agent" && !("id" in options.agent && options.agent.id !== undefined)) {
    context.addIssue({
      code: "custom",
      path: ["backend", "sandbox", "createRoute"],
      message:
        'is "agent" (the default), which creates a sandbox for an existing agent: pass agent: { id }, or createRoute: "sandboxes" to create the agent in the sandbox',
    });
  }
}

/** The whole `createSession` options object. */
export const sessionOptionsSchema = z
  .strictObject(sessionOptionsShape, { error: "createSession needs an options object" })
  .superRefine(refineSessionOptions);
const linkSessionOptionsSchema = z
  .strictObject({ ...sessionOptionsShape, backend: linkOrBackendSchema }, { error: "createSession needs an options object" })
  .superRefine(refineSessionOptions);

/**
 * Throw `INVALID_OPTIONS` naming every wrong option (`options.backend.environment: is required`),
 * before anything is started. The zod issues are in `details.issues`. `allowLink`: the backend may
 * be an injected link (`createSessionOnLink`).
 */
export function validateSessionOptions(options: unknown): asserts options is SessionOptions;
export function validateSessionOptions(options: unknown, allowLink: true): asserts options is LinkSessionOptions;
export function validateSessionOptions(options: unknown, allowLink = false): void {
  const checked = (allowLink ? linkSessionOptionsSchema : sessionOptionsSchema).safeParse(options);
  if (checked.success) return;
  const issues = describeIssues(checked.error.issues);
  const shown = issues.slice(0, 3).join("; ");
  const more = issues.length > 3 ? `; and ${issues.length - 3} more` : "";
  throw new ToolrelayError("INVALID_OPTIONS", `invalid createSession options: ${shown}${more}`, {
    cause: checked.error,
    details: { issues },
  });
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
