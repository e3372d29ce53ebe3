/**
 * The sandbox routes of the Letta API, typed. `@letta-ai/letta-client` 1.12.1 has no sandbox
 * resource, so these go through its generic `post` (same key, base URL, headers, timeouts and
 * retries as every other REST call) with the request and answer shapes defined and checked here.
 * Errors map like every REST error (`toRestError`): 401/403 UNAUTHORIZED, 404 NOT_FOUND, other
 * REST_FAILED; an answer without the fields the SDK needs is REST_FAILED too.
 */
import type { Letta } from "@letta-ai/letta-client";
import { ToolrelayError } from "../errors.js";
import type { GithubRepository, SandboxCreateRoute } from "./cloud-sandbox-options.js";
import { toRestError } from "./letta-rest-client.js";

/** What a create request asks for. */
export interface SandboxCreateRequest {
  route: SandboxCreateRoute;
  /** Required for the `"agent"` route; sent in the body for `"sandboxes"` when known. */
  agentId: string | undefined;
  /** An existing conversation: Cloud creates or resumes the conversation's sandbox. */
  conversationId: string | undefined;
  githubRepositories: readonly GithubRepository[];
  sandboxClass: "linux-vm" | "container" | undefined;
}

/** The create answer, reduced to what the SDK uses. */
export interface SandboxCreateAnswer {
  sandboxId: string;
  /** The device the sandbox's listener registers as: the SDK waits for it in `GET /v1/environments`. */
  deviceId: string;
  connectionName: string;
  conversationId: string | undefined;
  /** An existing sandbox of the same agent / conversation was resumed instead of a new one created. */
  resumed: boolean;
}

interface CreateBody {
  agentId?: string | undefined;
  conversationId?: string | undefined;
  githubRepositories?: GithubRepository[] | undefined;
  sandboxClass?: string | undefined;
}

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value.trim() !== "";

/**
 * `POST /v1/agents/{agentId}/sandboxes` or `POST /v1/sandboxes`. A create without an agent cannot
 * be told apart from its retry, so it is sent once (no client retries); the others are
 * create-or-resume and keep the client's retry policy.
 */
export async function createSandbox(client: Letta, request: SandboxCreateRequest): Promise<SandboxCreateAnswer> {
  const body: CreateBody = {};
  if (request.route === "sandboxes" && request.agentId !== undefined) body.agentId = request.agentId;
  if (request.conversationId !== undefined) body.conversationId = request.conversationId;
  if (request.githubRepositories.length > 0)
    body.githubRepositories = request.githubRepositories.map(({ owner, repo, commit }) => ({ owner, repo, commit }));
  if (request.sandboxClass !== undefined) body.sandboxClass = request.sandboxClass;
  let path: string;
  if (request.route === "agent") {
    if (request.agentId === undefined) {
      throw new ToolrelayError(
        "INVALID_OPTIONS",
        'backend.sandbox.createRoute "agent" needs an existing agent: pass agent: { id }, or use createRoute "sandboxes"',
      );
    }
    path = `/v1/agents/${encodeURIComponent(request.agentId)}/sandboxes`;
  } else {
    path = "/v1/sandboxes";
  }
  let answer: unknown;
  try {
    answer = await client.post(path, { body, ...(request.agentId === undefined ? { maxRetries: 0 } : {}) });
  } catch (error) {
    throw toRestError(error, `create a sandbox (POST ${routeName(request.route)})`);
  }
  const record = (typeof answer === "object" && answer !== null ? answer : {}) as Record<string, unknown>;
  const missing = (["sandboxId", "deviceId", "connectionName"] as const).filter((field) => !nonEmpty(record[field]));
  if (missing.length > 0) {
    throw new ToolrelayError(
      "REST_FAILED",
      `the Letta API created a sandbox but its answer has no ${missing.join(", ")} (POST ${routeName(request.route)})`,
      {
        details: { missing },
      },
    );
  }
  return {
    sandboxId: record.sandboxId as string,
    deviceId: record.deviceId as string,
    connectionName: record.connectionName as string,
    conversationId: nonEmpty(record.conversationId) ? record.conversationId : undefined,
    resumed: record.resumed === true,
  };
}

/**
 * `POST /v1/sandboxes/{sandboxId}/refresh {ttlMinutes}`: the sandbox lives `ttlMinutes` from now.
 * Rejects with NOT_FOUND when the sandbox is gone (expired or terminated).
 */
export async function refreshSandbox(client: Letta, sandboxId: string, ttlMinutes: number): Promise<void> {
  let answer: unknown;
  try {
    answer = await client.post(`/v1/sandboxes/${encodeURIComponent(sandboxId)}/refresh`, { body: { ttlMinutes } });
  } catch (error) {
    throw toRestError(error, `refresh sandbox ${sandboxId}`);
  }
  if ((answer as { success?: unknown } | null)?.success === false) {
    throw new ToolrelayError("REST_FAILED", `the Letta API did not confirm the refresh of sandbox ${sandboxId} (success: false)`, {
      details: { sandboxId },
    });
  }
}

/** `POST /v1/sandboxes/{sandboxId}/terminate`. A sandbox that is already gone (404) counts as terminated. */
export async function terminateSandbox(client: Letta, sandboxId: string): Promise<void> {
  try {
    await client.post(`/v1/sandboxes/${encodeURIComponent(sandboxId)}/terminate`, { body: {} });
  } catch (error) {
    const mapped = toRestError(error, `terminate sandbox ${sandboxId}`);
    if (mapped.code === "NOT_FOUND") return;
    throw mapped;
  }
}

function routeName(route: SandboxCreateRoute): string {
  return route === "agent" ? "/v1/agents/{agentId}/sandboxes" : "/v1/sandboxes";
}
