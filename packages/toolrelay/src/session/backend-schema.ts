/**
 * The `backend` option's schemas: `{ kind: "local" }` (a running app-server's
 * `url`, or `spawn`), `{ kind: "cloud" }` (an `environment` or a managed
 * `sandbox`) and, for `createSessionOnLink` only, `{ kind: "link" }`. Every
 * object is strict and tied to its public option type with `satisfies`.
 */
import { z } from "zod/v4";
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
import type { BackoffOptions } from "../transport/backoff.js";
import {
  type Shape,
  functionSchema,
  isFunction,
  nonEmptyString,
  nonNegativeNumber,
  positiveInteger,
  positiveNumber,
  requiredOr,
  stringRecord,
  timersSchema,
} from "./option-value-schemas.js";

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

/** The public backends (`createSession`). */
export const backendSchema = z.discriminatedUnion("kind", [localBackendSchema, cloudBackendSchema], {
  error: (issue) =>
    issue.input === undefined
      ? 'is required: { kind: "local", url }, { kind: "cloud", environment } or { kind: "cloud", sandbox }'
      : 'must be "local" or "cloud"',
});

/** `createSessionOnLink` only: the public backends, or an injected link. */
export const linkOrBackendSchema = z.discriminatedUnion("kind", [localBackendSchema, cloudBackendSchema, linkBackendSchema], {
  error: (issue) =>
    issue.input === undefined
      ? 'is required: { kind: "local", url }, { kind: "cloud", environment } or { kind: "cloud", sandbox }'
      : 'must be "local", "cloud" or "link"',
});
