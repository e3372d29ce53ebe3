/**
 * The relay's sandboxes: each one a real listener process (sandbox-process.ts) owned by the
 * tenant that created it, registered under the device id the relay gave it with a key minted for
 * it alone, and reaped — process stopped, directory removed, environment removed (its SDK sockets
 * closed with 1008), key revoked — when its TTL runs out, when it is terminated, when its process
 * exits, or when the relay closes. A create for an agent (and conversation) that already has a
 * live sandbox resumes that one. See docs/relay.md "Sandboxes".
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unrefTimer, type TimerHandle } from "toolrelay/protocol";
import type { DeviceGuard, ListenerRegistry } from "./listener-registry.js";
import type { RelayEmit, RelaySandboxInfo, SandboxReapReason } from "./relay-events.js";
import type { ResolvedRelayOptions } from "./relay-options.js";
import type { ResolvedSandboxOptions } from "./sandbox-options.js";
import { SandboxProcess, type SandboxExit } from "./sandbox-process.js";
import type { Principal, TenantDirectory } from "./tenant-directory.js";
import type { Tenant } from "./tenant.js";

/** A validated create request (sandbox-routes.ts checks the body). */
export interface SandboxCreateRequest {
  agentId: string | undefined;
  conversationId: string | undefined;
  sandboxClass: string | undefined;
  githubRepositories: Array<{ owner: string; repo: string; commit: string }>;
}

/** Minutes a sandbox lives after create or refresh when none are given (the SDKs' default too). */
export const DEFAULT_SANDBOX_TTL_MINUTES = 5;

interface Sandbox {
  id: string;
  tenant: Tenant;
  deviceId: string;
  connectionName: string;
  key: string;
  request: SandboxCreateRequest;
  process: SandboxProcess;
  createdAt: number;
  ttlMinutes: number;
  expiresAt: number;
  timer: TimerHandle | undefined;
  reaping: Promise<void> | undefined;
}

export type SandboxRefusal = { status: 429 | 500; message: string };

export class SandboxRegistry {
  #options: ResolvedRelayOptions;
  #sandbox: ResolvedSandboxOptions;
  #directory: TenantDirectory;
  #environments: ListenerRegistry;
  #emit: RelayEmit;
  #relayUrl: () => string;
  #byId = new Map<string, Sandbox>();
  #byDevice = new Map<string, Sandbox>();
  #base: string;
  #ownsBase: boolean;

  constructor(parts: {
    options: ResolvedRelayOptions;
    sandbox: ResolvedSandboxOptions;
    directory: TenantDirectory;
    environments: ListenerRegistry;
    emit: RelayEmit;
    relayUrl: () => string;
  }) {
    this.#options = parts.options;
    this.#sandbox = parts.sandbox;
    this.#directory = parts.directory;
    this.#environments = parts.environments;
    this.#emit = parts.emit;
    this.#relayUrl = parts.relayUrl;
    this.#ownsBase = parts.sandbox.directory === undefined;
    this.#base = parts.sandbox.directory ?? mkdtempSync(join(tmpdir(), "toolrelay-sandboxes-"));
    parts.environments.guardDevices(this.deviceGuard);
  }

  /** A sandbox's device may be registered only with its own key, and a sandbox key registers nothing else. */
  readonly deviceGuard: DeviceGuard = (principal, deviceId) => {
    if (principal.sandbox) {
      return principal.sandbox.deviceId === deviceId
        ? undefined
        : { status: 403, kind: "sandbox-device", message: "a sandbox key may only register its own device" };
    }
    return this.#byDevice.has(deviceId)
      ? { status: 409, kind: "sandbox-device", message: "this deviceId belongs to a sandbox" }
      : undefined;
  };

  /** Creates a sandbox, or resumes the live one of the same agent and conversation. */
  create(principal: Principal, request: SandboxCreateRequest): { info: RelaySandboxInfo; resumed: boolean } | { refusal: SandboxRefusal } {
    const { tenant } = principal;
    const existing = request.agentId === undefined ? undefined : this.#find(tenant, request.agentId, request.conversationId);
    if (existing) {
      this.#setTtl(existing, existing.ttlMinutes);
      return { info: this.#info(existing), resumed: true };
    }
    if (!tenant.reserve("sandbox")) {
      return { refusal: { status: 429, message: `the tenant has ${tenant.limit("sandbox")} sandboxes (maxSandboxesPerTenant)` } };
    }
    const uuid = randomUUID();
    const id = `sandbox-${uuid}`;
    const deviceId = `sandbox-device-${uuid}`;
    const connectionName = `sandbox-${uuid.slice(0, 8)}`;
    const key = this.#directory.addSandboxKey(tenant, { sandboxId: id, deviceId });
    let listener: SandboxProcess;
    try {
      const sharedState = this.#sharedState(tenant);
      const env: Record<string, string> = {
        ...this.#sandbox.env,
        LETTA_BASE_URL: this.#relayUrl(),
        LETTA_API_KEY: key,
        LETTA_LISTENER_DEVICE_ID: deviceId,
        IGNORE_SELF_HOSTED_LISTENER_ERROR: "1",
        ...(sharedState && this.#sandbox.sharedStateEnv ? { [this.#sandbox.sharedStateEnv]: sharedState } : {}),
      };
      listener = new SandboxProcess({
        directory: join(this.#base, id),
        sharedState,
        connectionName,
        env,
        sandbox: this.#sandbox,
        logger: this.#options.logger,
        timers: this.#options.timers,
      });
    } catch (error) {
      this.#directory.removeSandboxKey(key);
      tenant.release("sandbox");
      this.#options.logger.warn("relay: sandbox could not be started", { tenant: tenant.name, error: String(error) });
      return { refusal: { status: 500, message: "the sandbox could not be started" } };
    }
    const now = this.#options.timers.now();
    const sandbox: Sandbox = {
      id,
      tenant,
      deviceId,
      connectionName,
      key,
      request,
      process: listener,
      createdAt: now,
      ttlMinutes: DEFAULT_SANDBOX_TTL_MINUTES,
      expiresAt: now,
      timer: undefined,
      reaping: undefined,
    };
    this.#byId.set(id, sandbox);
    this.#byDevice.set(deviceId, sandbox);
    this.#setTtl(sandbox, DEFAULT_SANDBOX_TTL_MINUTES);
    void listener.exited.then((exit) => {
      if (!sandbox.reaping)
        this.#options.logger.warn("relay: sandbox process exited", {
          sandboxId: id,
          tenant: tenant.name,
          code: exit.code,
          signal: exit.signal,
        });
      void this.#reap(sandbox, "exited");
    });
    const info = this.#info(sandbox);
    this.#options.logger.info("relay: sandbox created", { sandboxId: id, tenant: tenant.name, pid: listener.pid });
    this.#emit("sandbox-created", info);
    return { info, resumed: false };
  }

  /** The sandbox lives `ttlMinutes` from now; `undefined` when the tenant has no such (live) sandbox. */
  refresh(tenant: Tenant, sandboxId: string, ttlMinutes: number): RelaySandboxInfo | undefined {
    const sandbox = this.#live(tenant, sandboxId);
    if (!sandbox) return undefined;
    this.#setTtl(sandbox, ttlMinutes);
    return this.#info(sandbox);
  }

  /** Reaps a sandbox now; resolves `false` when the tenant has no such (live) sandbox. */
  async terminate(tenant: Tenant, sandboxId: string): Promise<boolean> {
    const sandbox = this.#live(tenant, sandboxId);
    if (!sandbox) return false;
    await this.#reap(sandbox, "terminated");
    return true;
  }

  /** The live sandbox of an agent (and conversation) — the agent-scoped routes' target. */
  forAgent(tenant: Tenant, agentId: string, conversationId: string | undefined): string | undefined {
    return this.#find(tenant, agentId, conversationId)?.id;
  }

  /** Live sandboxes (of `tenant` only, when given). */
  list(tenant?: Tenant): RelaySandboxInfo[] {
    return [...this.#byId.values()]
      .filter((sandbox) => !sandbox.reaping && (tenant === undefined || sandbox.tenant === tenant))
      .map((sandbox) => this.#info(sandbox));
  }

  /** The last output lines of a live sandbox's listener (test hook only). */
  output(tenant: Tenant, sandboxId: string): string[] | undefined {
    return this.#live(tenant, sandboxId)?.process.output();
  }

  /** Shutdown: every sandbox reaped; the base directory removed when the relay made it. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#byId.values()].map((sandbox) => this.#reap(sandbox, "shutdown")));
    if (this.#ownsBase) rmSync(this.#base, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
  }

  #find(tenant: Tenant, agentId: string, conversationId: string | undefined): Sandbox | undefined {
    for (const sandbox of this.#byId.values()) {
      if (sandbox.reaping || sandbox.tenant !== tenant) continue;
      if (sandbox.request.agentId === agentId && sandbox.request.conversationId === conversationId) return sandbox;
    }
    return undefined;
  }

  #live(tenant: Tenant, sandboxId: string): Sandbox | undefined {
    const sandbox = this.#byId.get(sandboxId);
    return sandbox && !sandbox.reaping && sandbox.tenant === tenant ? sandbox : undefined;
  }

  #setTtl(sandbox: Sandbox, ttlMinutes: number): void {
    const { timers } = this.#options;
    if (sandbox.timer !== undefined) timers.clearTimeout(sandbox.timer);
    const lifetimeMs = ttlMinutes * this.#sandbox.minuteMs;
    sandbox.ttlMinutes = ttlMinutes;
    sandbox.expiresAt = timers.now() + lifetimeMs;
    sandbox.timer = timers.setTimeout(() => {
      sandbox.timer = undefined;
      void this.#reap(sandbox, "expired");
    }, lifetimeMs);
    unrefTimer(sandbox.timer);
  }

  /** A tenant's state directory, shared by its sandboxes and kept when they are reaped (`sharedStateEnv`). */
  #sharedState(tenant: Tenant): string | undefined {
    if (this.#sandbox.sharedStateEnv === undefined) return undefined;
    const path = join(this.#base, "tenants", tenant.name, "state");
    mkdirSync(path, { recursive: true, mode: 0o700 });
    return path;
  }

  /** Process first (so it cannot register again), then its environment, directory, key and count. */
  #reap(sandbox: Sandbox, reason: SandboxReapReason): Promise<void> {
    sandbox.reaping ??= (async () => {
      if (sandbox.timer !== undefined) this.#options.timers.clearTimeout(sandbox.timer);
      sandbox.timer = undefined;
      await sandbox.process.stop();
      const exit: SandboxExit = await sandbox.process.exited;
      this.#environments.removeDevice(sandbox.deviceId, `Sandbox ${reason}`);
      this.#directory.removeSandboxKey(sandbox.key);
      this.#byId.delete(sandbox.id);
      this.#byDevice.delete(sandbox.deviceId);
      sandbox.tenant.release("sandbox");
      this.#options.logger.info("relay: sandbox reaped", { sandboxId: sandbox.id, tenant: sandbox.tenant.name, reason });
      this.#emit("sandbox-reaped", {
        sandboxId: sandbox.id,
        tenant: sandbox.tenant.name,
        reason,
        exit: { code: exit.code, signal: exit.signal },
      });
    })();
    return sandbox.reaping;
  }

  #info(sandbox: Sandbox): RelaySandboxInfo {
    const environment = this.#environments.list(sandbox.tenant).find((candidate) => candidate.identity.deviceId === sandbox.deviceId);
    return {
      sandboxId: sandbox.id,
      tenant: sandbox.tenant.name,
      deviceId: sandbox.deviceId,
      connectionName: sandbox.connectionName,
      agentId: sandbox.request.agentId,
      conversationId: sandbox.request.conversationId,
      sandboxClass: sandbox.request.sandboxClass,
      githubRepositories: sandbox.request.githubRepositories.map((repository) => ({ ...repository })),
      ttlMinutes: sandbox.ttlMinutes,
      createdAt: new Date(sandbox.createdAt).toISOString(),
      expiresAt: new Date(sandbox.expiresAt).toISOString(),
      connectionId: environment?.identity.connectionId,
      online: environment?.listener.ready ?? false,
      pid: sandbox.process.pid,
      directory: sandbox.process.directory,
      workspace: sandbox.process.layout.workspace,
    };
  }
}
