/**
 * `createSession` options as one zod schema, checked before anything is
 * opened, spawned or looked up. Every object is strict, so a typo (`tool:`)
 * is refused like a wrong value; `validateSessionOptions` reports every
 * problem as `INVALID_OPTIONS` with the path of the option that is wrong. The
 * backend's schemas are in `backend-schema.ts`.
 *
 * The shapes are tied to the public option types with `satisfies`: an option
 * added to a type and forgotten here does not compile.
 */
import { z } from "zod/v4";
import { listPermissionModes, PERMISSION_MODES } from "../internal/permission-modes.js";
import { MAX_TOOL_TIMEOUT_MS } from "../tools/index.js";
import { backendSchema, linkOrBackendSchema } from "./backend-schema.js";
import {
  type Shape,
  functionSchema,
  loggerSchema,
  nonEmptyString,
  nonNegativeInteger,
  nonNegativeNumber,
  positiveInteger,
  positiveNumber,
  requiredOr,
  timersSchema,
  journalSchema,
  tracerSchema,
} from "./option-value-schemas.js";
import { SESSION_EVENT_NAMES } from "./session-events.js";
import type { SessionOptions } from "./session-options.js";

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

/** `on`: a listener (a function) for each named session event; an unknown name is refused. */
const listenersSchema = z.strictObject(Object.fromEntries(SESSION_EVENT_NAMES.map((name) => [name, functionSchema.optional()])), {
  error: "must be an object of listeners by event name",
});

/** The session options' shape (the backend is `backendSchema`); its keys are the option names. */
export const sessionOptionsShape = {
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
  mode: z.enum(PERMISSION_MODES, { error: `must be ${listPermissionModes()}` }).optional(),
  canUseTool: functionSchema.optional(),
  toolTimeoutMs: positiveInteger
    .max(MAX_TOOL_TIMEOUT_MS, { error: `must be at most ${MAX_TOOL_TIMEOUT_MS} (the runtime stops waiting after 300 s)` })
    .optional(),
  approvalTimeoutMs: positiveInteger
    .min(1_000, { error: "must be at least 1000" })
    .max(MAX_TOOL_TIMEOUT_MS - 1_000, {
      error: `must be at most ${MAX_TOOL_TIMEOUT_MS - 1_000} (the runtime stops waiting after 300 s, approval included)`,
    })
    .optional(),
  maxInputBytes: positiveInteger.optional(),
  maxResultChars: positiveInteger.optional(),
  reconnectGraceMs: nonNegativeInteger.max(2_147_483_647, { error: "must be at most 2147483647 (a timer's longest delay)" }).optional(),
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
  turnGapMs: nonNegativeInteger.max(60_000, { error: "must be at most 60000" }).optional(),
  journal: journalSchema.optional(),
  on: listenersSchema.optional(),
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
  options: { workspace?: unknown; backend: { kind: string; sandbox?: { createRoute?: string | undefined } | undefined }; agent: object },
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
/** `createSessionOnLink`'s options: the same, with an injected link allowed as the backend. */
export const linkSessionOptionsSchema = z
  .strictObject({ ...sessionOptionsShape, backend: linkOrBackendSchema }, { error: "createSession needs an options object" })
  .superRefine(refineSessionOptions);
