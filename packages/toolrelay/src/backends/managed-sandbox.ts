/**
 * One SDK-managed Letta Cloud sandbox, from create to close: create (or resume) it, set its TTL,
 * wait until its listener is online (and set the TTL again), refresh it every `refreshIntervalMs`
 * and before each turn, and terminate it on close only when asked. A refresh answered 404 means the sandbox is
 * gone: from then on every turn fails with SANDBOX_EXPIRED, naming the conversation to resume.
 * See docs/cloud.md "Managed sandboxes".
 */
import type { Letta } from "@letta-ai/letta-client";
import { ToolrelayError, isToolrelayError } from "../errors.js";
import { unrefTimer, type TimerHandle, type Timers } from "../internal/timers.js";
import { listCloudEnvironments } from "./cloud-environment.js";
import type { ResolvedSandboxOptions } from "./cloud-sandbox-options.js";
import { createSandbox, refreshSandbox, terminateSandbox, type SandboxCreateAnswer } from "./sandbox-rest.js";

/** What the session knows about its sandbox (`session.sandbox`). */
export interface ManagedSandboxInfo {
  /** The sandbox's id (refresh and terminate name it). */
  sandboxId: string;
  /** The device its listener registered as (the environment's `deviceId`). */
  deviceId: string;
  /** The environment's name (its listener's `--env-name`). */
  connectionName: string;
  /** An existing sandbox of the same agent / conversation was resumed. */
  resumed: boolean;
  /** Epoch ms the SDK asked for the sandbox. */
  createdAt: number;
  /** Epoch ms its listener was first seen online (`readyAt - createdAt`: how long it took to start). */
  readyAt: number;
}

export interface ManagedSandboxContext {
  client: Letta;
  options: ResolvedSandboxOptions;
  agentId: string | undefined;
  /** The conversation the session names (not `"new"`): Cloud creates or resumes its sandbox. */
  conversationId: string | undefined;
  timers: Timers;
  /** Aborting it stops the wait for the listener (ABORTED). */
  signal?: AbortSignal | undefined;
  /** Errors that do not fail a call (a background refresh that failed, a terminate that failed). */
  onError(error: ToolrelayError): void;
}

/** The listener of a sandbox as the environment listing shows it. */
type ListenerState = "not listed" | "offline" | { connectionId: string };

export class ManagedSandbox {
  readonly info: ManagedSandboxInfo;
  #context: ManagedSandboxContext;
  #conversationId: string | undefined;
  #agentId: string | undefined;
  #timer: TimerHandle | undefined;
  #refreshing: Promise<void> | undefined;
  #gone: ToolrelayError | undefined;
  #closed = false;

  // biome-ignore lint/style/useConsistentMemberAccessibility: a constructor cannot be #private; ManagedSandbox.provision is the way in
  private constructor(context: ManagedSandboxContext, created: SandboxCreateAnswer, readyAt: number, createdAt: number) {
    this.#context = context;
    this.#agentId = context.agentId;
    this.#conversationId = created.conversationId ?? context.conversationId;
    this.info = {
      sandboxId: created.sandboxId,
      deviceId: created.deviceId,
      connectionName: created.connectionName,
      resumed: created.resumed,
      createdAt,
      readyAt,
    };
  }

  /**
   * Create (or resume) the sandbox, set its TTL and wait until its listener is online; resolves
   * with the sandbox and the environment's connection id. SANDBOX_NOT_READY when the listener is
   * not online within `readyTimeoutMs`; REST errors as in `toRestError`. A sandbox that never
   * came online is terminated only with `terminateOnClose`.
   */
  static async provision(context: ManagedSandboxContext): Promise<{ sandbox: ManagedSandbox; connectionId: string }> {
    const { client, options, timers } = context;
    const createdAt = timers.now();
    const created = await createSandbox(client, {
      route: options.createRoute,
      agentId: context.agentId,
      conversationId: context.conversationId,
      githubRepositories: options.githubRepositories,
      sandboxClass: options.sandboxClass,
    });
    try {
      await refreshSandbox(client, created.sandboxId, options.ttlMinutes);
      const connectionId = await waitUntilOnline(context, created, createdAt);
      // Coming online may take a good part of the TTL: it starts over now that the session uses it.
      await refreshSandbox(client, created.sandboxId, options.ttlMinutes);
      const sandbox = new ManagedSandbox(context, created, timers.now(), createdAt);
      sandbox.#schedule();
      return { sandbox, connectionId };
    } catch (error) {
      if (options.terminateOnClose) await terminateSandbox(client, created.sandboxId).catch(() => undefined);
      // The listing's failures are retried until the deadline, so a NOT_FOUND here is the refresh's: the sandbox is gone.
      if (isToolrelayError(error, "NOT_FOUND"))
        throw expired(created.sandboxId, context.agentId, created.conversationId ?? context.conversationId, error);
      throw error;
    }
  }

  /** The runtime the session registered (the conversation a resume needs). */
  setRuntime(agentId: string | undefined, conversationId: string | undefined): void {
    if (agentId) this.#agentId = agentId;
    if (conversationId) this.#conversationId = conversationId;
  }

  /**
   * Before each turn: refresh the TTL. The sandbox is gone (404 now or before): SANDBOX_EXPIRED.
   * Any other refresh failure is reported through `onError` and the turn goes on (the last
   * refresh still holds).
   */
  async beforeTurn(): Promise<void> {
    if (this.#gone) throw this.#gone;
    await this.#refresh();
    if (this.#gone) throw this.#gone;
  }

  /** Stops refreshing; terminates the sandbox with `terminateOnClose`. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) this.#context.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.#context.options.terminateOnClose || this.#gone) return;
    try {
      await terminateSandbox(this.#context.client, this.info.sandboxId);
    } catch (error) {
      this.#context.onError(isToolrelayError(error) ? error : new ToolrelayError("REST_FAILED", String(error), { cause: error }));
    }
  }

  #schedule(): void {
    if (this.#closed || this.#gone) return;
    this.#timer = this.#context.timers.setTimeout(() => {
      this.#timer = undefined;
      void this.#refresh().finally(() => this.#schedule());
    }, this.#context.options.refreshIntervalMs);
    unrefTimer(this.#timer);
  }

  /** One refresh at a time; a caller arriving while one runs shares it. Never rejects. */
  #refresh(): Promise<void> {
    this.#refreshing ??= refreshSandbox(this.#context.client, this.info.sandboxId, this.#context.options.ttlMinutes)
      .catch((error: unknown) => {
        if (isToolrelayError(error, "NOT_FOUND")) {
          this.#gone ??= expired(this.info.sandboxId, this.#agentId, this.#conversationId, error);
          if (this.#timer !== undefined) this.#context.timers.clearTimeout(this.#timer);
          this.#timer = undefined;
          return;
        }
        this.#context.onError(
          isToolrelayError(error)
            ? error
            : new ToolrelayError("REST_FAILED", `refresh of sandbox ${this.info.sandboxId} failed`, { cause: error }),
        );
      })
      .finally(() => {
        this.#refreshing = undefined;
      });
    return this.#refreshing;
  }
}

/** Poll `GET /v1/environments` for the sandbox's device until it has a connection. */
async function waitUntilOnline(context: ManagedSandboxContext, created: SandboxCreateAnswer, startedAt: number): Promise<string> {
  const { client, options, timers, signal } = context;
  const deadline = startedAt + options.readyTimeoutMs;
  let last: ListenerState | ToolrelayError = "not listed";
  for (;;) {
    if (signal?.aborted)
      throw new ToolrelayError("ABORTED", `the session's signal aborted while sandbox ${created.sandboxId} was starting`);
    try {
      const match = (await listCloudEnvironments(client))
        .filter((environment) => environment.deviceId === created.deviceId)
        .sort((a, b) => (b.connectedAt ?? 0) - (a.connectedAt ?? 0));
      const online = match.find((environment) => environment.connectionId !== null);
      if (online?.connectionId) return online.connectionId;
      last = match.length === 0 ? "not listed" : "offline";
    } catch (error) {
      const mapped = isToolrelayError(error) ? error : new ToolrelayError("REST_FAILED", String(error), { cause: error });
      if (mapped.code === "UNAUTHORIZED") throw mapped;
      last = mapped;
    }
    const now = timers.now();
    if (now >= deadline) {
      const waitedMs = now - startedAt;
      const state = typeof last === "string" ? last : `listing failed: ${last.message}`;
      throw new ToolrelayError(
        "SANDBOX_NOT_READY",
        `sandbox ${created.sandboxId} did not come online within ${options.readyTimeoutMs} ms (waited ${waitedMs} ms; its device ${created.deviceId} was ${state})`,
        {
          details: {
            sandboxId: created.sandboxId,
            deviceId: created.deviceId,
            waitedMs,
            readyTimeoutMs: options.readyTimeoutMs,
            lastState: state,
          },
          ...(typeof last === "string" ? {} : { cause: last }),
        },
      );
    }
    await sleep(timers, Math.min(options.readyPollIntervalMs, deadline - now), signal);
  }
}

function sleep(timers: Timers, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = () => {
      timers.clearTimeout(handle);
      resolve();
    };
    const handle = timers.setTimeout(
      () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function expired(sandboxId: string, agentId: string | undefined, conversationId: string | undefined, cause: unknown): ToolrelayError {
  const resume = conversationId
    ? `start a new session with conversation: ${JSON.stringify(conversationId)}${agentId ? ` (agent ${agentId})` : ""} to resume the conversation in a new sandbox`
    : "start a new session to get a new sandbox";
  return new ToolrelayError(
    "SANDBOX_EXPIRED",
    `sandbox ${sandboxId} is gone (its TTL ran out or it was terminated; the refresh answered 404): ${resume}`,
    {
      cause,
      details: { sandboxId, agentId, conversationId },
    },
  );
}
