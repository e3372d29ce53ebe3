/**
 * The options of an SDK-managed Letta Cloud sandbox (`backend: { kind: "cloud", sandbox: {…} }`),
 * their defaults in one place, and the checks of the values Cloud defines (GitHub repositories,
 * TTL). The session options schema refuses a wrong value before anything is created; see
 * docs/cloud.md "Managed sandboxes".
 */

/** A GitHub repository checked out in the sandbox, at one commit. */
export interface GithubRepository {
  /** The user or organisation, e.g. `"letta-ai"` (1–39 characters: letters, digits, `-`, not at either end). */
  owner: string;
  /** The repository, e.g. `"letta-code"` (1–100 characters: letters, digits, `.`, `_`, `-`; not `.` or `..`). */
  repo: string;
  /** The full 40-hex-digit commit SHA (no branch names: a sandbox is reproducible). */
  commit: string;
}

/** Which route creates the sandbox. The public evidence is split; both are supported. */
export type SandboxCreateRoute = "agent" | "sandboxes";

/** `backend.sandbox`: an SDK-managed Letta Cloud sandbox; `{}` takes every default. */
export interface CloudSandboxOptions {
  /**
   * `"agent"`: `POST /v1/agents/{agentId}/sandboxes` (the official agent SDK's route; needs
   * `agent: { id }`). `"sandboxes"`: `POST /v1/sandboxes` with `agentId` in the body (reported as
   * the live route by a public tracker); with `agent: { create }` the body has no `agentId`.
   * Refresh and terminate use `POST /v1/sandboxes/{sandboxId}/refresh|terminate` either way.
   * Default `"agent"`.
   */
  createRoute?: SandboxCreateRoute | undefined;
  /** The machine class. Default: not sent (Cloud's default). */
  sandboxClass?: "linux-vm" | "container" | undefined;
  /** Repositories checked out in the sandbox, at most 10. Default: none. */
  githubRepositories?: readonly GithubRepository[] | undefined;
  /** The sandbox's time to live after each refresh, in whole minutes, 1–60. Default 5. */
  ttlMinutes?: number | undefined;
  /** How long to wait for the sandbox's listener to come online after it was created, in ms. Default 120_000. */
  readyTimeoutMs?: number | undefined;
  /** How often to look for it (`GET /v1/environments`) meanwhile, in ms. Default 1_000. */
  readyPollIntervalMs?: number | undefined;
  /** How often the TTL is refreshed while the session is open, in ms. Default 0.8 × `ttlMinutes` (4 minutes for 5). */
  refreshIntervalMs?: number | undefined;
  /**
   * Terminate the sandbox when the session closes (or fails to start). Default `false`: other
   * sessions of the same agent or conversation may share it, and its TTL ends it anyway.
   */
  terminateOnClose?: boolean | undefined;
}

/** Every option with its default applied (internal: no entry point exports it). */
export interface ResolvedSandboxOptions {
  createRoute: SandboxCreateRoute;
  sandboxClass: "linux-vm" | "container" | undefined;
  githubRepositories: readonly GithubRepository[];
  ttlMinutes: number;
  readyTimeoutMs: number;
  readyPollIntervalMs: number;
  refreshIntervalMs: number;
  terminateOnClose: boolean;
}

export const SANDBOX_DEFAULTS = {
  createRoute: "agent",
  ttlMinutes: 5,
  readyTimeoutMs: 120_000,
  readyPollIntervalMs: 1_000,
  /** The share of the TTL after which it is refreshed. */
  refreshShare: 0.8,
  terminateOnClose: false,
} as const;

/** TTL bounds (minutes) Cloud accepts. */
export const SANDBOX_TTL_MINUTES = { min: 1, max: 60 } as const;
/** Repositories one sandbox may check out. */
export const MAX_GITHUB_REPOSITORIES = 10;

export const GITHUB_OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$/;
export const GITHUB_REPO = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,100}$/;
export const GITHUB_COMMIT = /^[0-9a-fA-F]{40}$/;

export function resolveSandboxOptions(options: CloudSandboxOptions): ResolvedSandboxOptions {
  const ttlMinutes = options.ttlMinutes ?? SANDBOX_DEFAULTS.ttlMinutes;
  return {
    createRoute: options.createRoute ?? SANDBOX_DEFAULTS.createRoute,
    sandboxClass: options.sandboxClass,
    githubRepositories: options.githubRepositories ?? [],
    ttlMinutes,
    readyTimeoutMs: options.readyTimeoutMs ?? SANDBOX_DEFAULTS.readyTimeoutMs,
    readyPollIntervalMs: options.readyPollIntervalMs ?? SANDBOX_DEFAULTS.readyPollIntervalMs,
    refreshIntervalMs: options.refreshIntervalMs ?? Math.floor(ttlMinutes * 60_000 * SANDBOX_DEFAULTS.refreshShare),
    terminateOnClose: options.terminateOnClose ?? SANDBOX_DEFAULTS.terminateOnClose,
  };
}
