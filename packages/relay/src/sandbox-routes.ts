/**
 * The sandbox routes, each scoped to the caller's tenant (another tenant's sandbox is a 404, like
 * one that does not exist):
 *
 * - `POST /v1/agents/{agentId}/sandboxes {conversationId?, githubRepositories?, sandboxClass?}`
 * - `POST /v1/sandboxes {agentId?, conversationId?, githubRepositories?, sandboxClass?}`
 *   → `200 {sandboxId, deviceId, connectionName, agentId?, conversationId?, resumed, expiresAt}`
 * - `POST /v1/sandboxes/{sandboxId}/refresh {ttlMinutes?}` → `200 {success, sandboxId, expiresAt}`
 * - `POST /v1/sandboxes/{sandboxId}/terminate` → `200 {success, sandboxId}`
 * - `POST /v1/agents/{agentId}/sandboxes/refresh {ttlMinutes?, conversationId?}` and
 *   `DELETE /v1/agents/{agentId}/sandboxes[?conversationId=]` (the agent-scoped variants)
 * - `GET /v1/sandboxes/{sandboxId}` → the sandbox as the relay sees it
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { GITHUB_COMMIT, GITHUB_OWNER, GITHUB_REPO, MAX_GITHUB_REPOSITORIES, SANDBOX_TTL_MINUTES } from "toolrelay/protocol";
import type { RelayEmit } from "./relay-events.js";
import { readJsonBody, sendError, sendJson } from "./relay-http.js";
import type { ResolvedRelayOptions } from "./relay-options.js";
import { DEFAULT_SANDBOX_TTL_MINUTES, type SandboxCreateRequest, type SandboxRegistry } from "./sandbox-registry.js";
import type { Principal } from "./tenant-directory.js";

const AGENT_CREATE = /^\/v1\/agents\/([^/]+)\/sandboxes$/;
const AGENT_REFRESH = /^\/v1\/agents\/([^/]+)\/sandboxes\/refresh$/;
const SANDBOX = /^\/v1\/sandboxes\/([^/]+)$/;
const SANDBOX_ACTION = /^\/v1\/sandboxes\/([^/]+)\/(refresh|terminate)$/;
const MAX_ID_LENGTH = 512;

/** Whether `pathname` is one of the sandbox routes. */
export function isSandboxRoute(pathname: string): boolean {
  return pathname === "/v1/sandboxes" || [AGENT_CREATE, AGENT_REFRESH, SANDBOX, SANDBOX_ACTION].some((route) => route.test(pathname));
}

export interface SandboxRouteContext {
  options: ResolvedRelayOptions;
  sandboxes: SandboxRegistry | undefined;
  emit: RelayEmit;
}

type Body = Record<string, unknown>;

export async function handleSandboxRoute(
  context: SandboxRouteContext,
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  principal: Principal,
): Promise<void> {
  const { sandboxes } = context;
  const refuse = (status: number, message: string): void => {
    context.emit("refused", { kind: "sandbox-refused", tenant: principal.tenant.name, connectionId: undefined, reason: message });
    sendError(response, status, message);
  };
  if (!sandboxes) return refuse(501, "this relay provisions no sandboxes (start it with a sandbox command: --sandbox-command)");
  const path = url.pathname;
  const method = request.method ?? "GET";
  const { tenant } = principal;

  const byId = SANDBOX.exec(path);
  if (byId && method === "GET") {
    const found = sandboxes.list(tenant).find((sandbox) => sandbox.sandboxId === decode(byId[1]!));
    return found ? sendJson(response, 200, found) : refuse(404, "sandbox not found");
  }
  const agentCreate = AGENT_CREATE.exec(path);
  if (agentCreate && method === "DELETE") {
    const conversationId = url.searchParams.get("conversationId") ?? undefined;
    const target = sandboxes.forAgent(tenant, decode(agentCreate[1]!), conversationId);
    if (!target || !(await sandboxes.terminate(tenant, target))) return refuse(404, "the agent has no sandbox");
    return sendJson(response, 200, { success: true, sandboxId: target });
  }
  if (method !== "POST") return refuse(405, "use POST");
  const body = await readJsonBody(request, context.options.maxBodyBytes);
  if (!body.ok) return refuse(body.status, body.message);
  if (typeof body.value !== "object" || body.value === null || Array.isArray(body.value)) return refuse(400, "body must be a JSON object");
  const input = body.value as Body;

  if (path === "/v1/sandboxes" || agentCreate) {
    const parsed = parseCreate(input, agentCreate ? decode(agentCreate[1]!) : undefined);
    if (typeof parsed === "string") return refuse(400, parsed);
    const created = sandboxes.create(principal, parsed);
    if ("refusal" in created) return refuse(created.refusal.status, created.refusal.message);
    const { info, resumed } = created;
    return sendJson(response, 200, {
      sandboxId: info.sandboxId,
      deviceId: info.deviceId,
      connectionName: info.connectionName,
      ...(info.agentId === undefined ? {} : { agentId: info.agentId }),
      ...(info.conversationId === undefined ? {} : { conversationId: info.conversationId }),
      resumed,
      expiresAt: info.expiresAt,
    });
  }
  const ttlMinutes = parseTtl(input.ttlMinutes);
  if (typeof ttlMinutes === "string") return refuse(400, ttlMinutes);
  const agentRefresh = AGENT_REFRESH.exec(path);
  if (agentRefresh) {
    const conversationId = optionalId(input.conversationId);
    if (conversationId === false) return refuse(400, "conversationId must be a non-empty string");
    const target = sandboxes.forAgent(tenant, decode(agentRefresh[1]!), conversationId);
    const refreshed = target === undefined ? undefined : sandboxes.refresh(tenant, target, ttlMinutes);
    if (!refreshed) return refuse(404, "the agent has no sandbox");
    return sendJson(response, 200, { success: true, sandboxId: refreshed.sandboxId, expiresAt: refreshed.expiresAt });
  }
  const action = SANDBOX_ACTION.exec(path);
  if (!action) return refuse(404, "no such route");
  const sandboxId = decode(action[1]!);
  if (action[2] === "refresh") {
    const refreshed = sandboxes.refresh(tenant, sandboxId, ttlMinutes);
    if (!refreshed) return refuse(404, "sandbox not found (expired, terminated, or never created)");
    return sendJson(response, 200, { success: true, sandboxId, expiresAt: refreshed.expiresAt });
  }
  if (!(await sandboxes.terminate(tenant, sandboxId))) return refuse(404, "sandbox not found (expired, terminated, or never created)");
  return sendJson(response, 200, { success: true, sandboxId });
}

/** A create body, or the reason for a 400. */
export function parseCreate(input: Body, pathAgentId: string | undefined): SandboxCreateRequest | string {
  const agentId = pathAgentId ?? optionalId(input.agentId);
  if (agentId === false || (pathAgentId !== undefined && !validId(pathAgentId))) return "agentId must be a non-empty string";
  const conversationId = optionalId(input.conversationId);
  if (conversationId === false) return "conversationId must be a non-empty string";
  if (conversationId !== undefined && agentId === undefined) return "conversationId needs agentId";
  const sandboxClass = input.sandboxClass;
  if (sandboxClass !== undefined && sandboxClass !== "linux-vm" && sandboxClass !== "container")
    return 'sandboxClass must be "linux-vm" or "container"';
  const repositories = input.githubRepositories ?? [];
  if (!Array.isArray(repositories) || repositories.length > MAX_GITHUB_REPOSITORIES)
    return `githubRepositories must be an array of at most ${MAX_GITHUB_REPOSITORIES}`;
  const githubRepositories: SandboxCreateRequest["githubRepositories"] = [];
  for (const entry of repositories as unknown[]) {
    const { owner, repo, commit } = (typeof entry === "object" && entry !== null ? entry : {}) as Body;
    if (
      typeof owner !== "string" ||
      !GITHUB_OWNER.test(owner) ||
      typeof repo !== "string" ||
      !GITHUB_REPO.test(repo) ||
      typeof commit !== "string" ||
      !GITHUB_COMMIT.test(commit)
    ) {
      return "every githubRepositories entry must be { owner, repo, commit } with a 40-hex commit";
    }
    githubRepositories.push({ owner, repo, commit });
  }
  return { agentId, conversationId, sandboxClass: sandboxClass as string | undefined, githubRepositories };
}

function parseTtl(value: unknown): number | string {
  if (value === undefined) return DEFAULT_SANDBOX_TTL_MINUTES;
  if (typeof value !== "number" || !Number.isInteger(value) || value < SANDBOX_TTL_MINUTES.min || value > SANDBOX_TTL_MINUTES.max) {
    return `ttlMinutes must be a whole number from ${SANDBOX_TTL_MINUTES.min} to ${SANDBOX_TTL_MINUTES.max}`;
  }
  return value;
}

function validId(value: string): boolean {
  return value.trim().length > 0 && value.length <= MAX_ID_LENGTH;
}

/** `undefined` when absent, `false` when present but not a bounded non-empty string. */
function optionalId(value: unknown): string | undefined | false {
  if (value === undefined || value === null) return undefined;
  return typeof value === "string" && validId(value) ? value : false;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
