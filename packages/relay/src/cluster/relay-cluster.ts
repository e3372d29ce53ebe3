/**
 * One relay node's part in a cluster (docs/relay-cluster.md): it registers environments in the
 * shared directory, decides where each WebSocket upgrade goes — handled here when this node holds
 * (or can take) the environment's lease, else piped to the node that holds it — takes an
 * environment over from the shared store when it gets the lease, and lets it go the moment the
 * lease is lost. Per node stay the sockets, queues, heartbeats and the connection guard.
 */
import { randomUUID } from "node:crypto";
import type { Subscription } from "@nats-io/transport-node";
import { unrefTimer } from "toolrelay/protocol";
import type { EnvironmentIdentity } from "../environment.js";
import type { EnvironmentJournal } from "../environment-journal.js";
import {
  environmentIdOf,
  registrationAnswer,
  type ListenerRegistry,
  type RegistrationAnswer,
  type RegistrationRefusal,
  type RegistrationRequest,
  type RegistryClusterHooks,
} from "../listener-registry.js";
import { RelayFrame } from "../relay-frame.js";
import type { ResolvedRelayOptions } from "../relay-options.js";
import type { Principal } from "../tenant-directory.js";
import type { Tenant } from "../tenant.js";
import { CallJournal } from "./call-journal.js";
import type { ResolvedClusterOptions } from "./cluster-options.js";
import { openClusterStore, type ClusterStore } from "./cluster-store.js";
import { EnvironmentDirectory, type EnvironmentRecord } from "./environment-directory.js";
import { EnvironmentLeases } from "./environment-leases.js";
import { OrphanSweep, orphanSweepIntervalMs } from "./orphan-sweep.js";
import { TenantUsageBoard } from "./tenant-usage-board.js";

/** Where one WebSocket upgrade goes. */
export type UpgradeRoute =
  | { kind: "local" }
  | { kind: "pipe"; address: string; nodeId: string }
  /** No such environment of the caller's tenant: the normal upgrade path answers it (404, or 1008 to a listener). */
  | { kind: "not-found" }
  /** The environment cannot be served now (a piped upgrade reached a node that no longer holds it; its old holder still holds it): 503. */
  | { kind: "busy"; message: string };

/** `GET /v1/environments` entries, cluster-wide. */
export interface ClusterConnection {
  id: string;
  connectionId: string | null;
  deviceId: string;
  connectionName: string;
  connectedAt: number | null;
}

export interface RelayClusterParts {
  cluster: ResolvedClusterOptions;
  options: ResolvedRelayOptions;
  registry: ListenerRegistry;
  /** `host:port` other nodes reach this node at. */
  address: string;
  /** A tenant by name (every node is configured with the same keys). */
  tenant(name: string): Tenant | undefined;
  /** Every tenant (their caps count the whole cluster). */
  tenants(): Tenant[];
}

/** How long a node's published tenant usage counts without a refresh: twice the lease TTL, at least 2 s. */
function usageLifeMs(leaseTtlMs: number): number {
  return Math.max(2_000, leaseTtlMs * 2);
}

function identityOf(record: EnvironmentRecord): EnvironmentIdentity {
  return {
    id: record.id,
    connectionId: record.connectionId,
    deviceId: record.deviceId,
    listenerInstanceId: record.listenerInstanceId,
    connectionName: record.connectionName,
    sandboxId: record.sandboxId,
  };
}

export class RelayCluster implements RegistryClusterHooks {
  readonly nodeId: string;
  #parts: RelayClusterParts;
  #store: ClusterStore;
  #leases: EnvironmentLeases;
  #directory: EnvironmentDirectory;
  #calls: CallJournal;
  #usage: TenantUsageBoard;
  #orphans: OrphanSweep;
  #adopting = new Map<string, Promise<UpgradeRoute | undefined>>();
  #subscription: Subscription;
  #stopping: Promise<void> | undefined;

  /** Use {@link RelayCluster.start}. */
  constructor(parts: RelayClusterParts, store: ClusterStore) {
    this.#parts = parts;
    this.#store = store;
    this.nodeId = parts.cluster.nodeId;
    const { options } = parts;
    this.#directory = new EnvironmentDirectory(store.environments);
    this.#calls = new CallJournal(store.calls, store.callWrites);
    this.#usage = new TenantUsageBoard({
      kv: store.usage,
      nodeId: this.nodeId,
      tenants: parts.tenants(),
      lifeMs: usageLifeMs(parts.cluster.leaseTtlMs),
      timers: options.timers,
      logger: options.logger,
    });
    this.#leases = new EnvironmentLeases({
      kv: store.leases,
      nodeId: this.nodeId,
      address: parts.address,
      ttlMs: parts.cluster.leaseTtlMs,
      timers: options.timers,
      logger: options.logger,
      onLost: (connectionId) => {
        const environment = parts.registry.get(connectionId);
        if (environment) parts.registry.evict(environment);
      },
    });
    this.#orphans = new OrphanSweep({
      intervalMs: orphanSweepIntervalMs(options.environmentGraceMs, parts.cluster.leaseTtlMs),
      timers: options.timers,
      logger: options.logger,
      recorded: () => this.#directory.connectionIds(),
      leased: () => this.#leases.leased(),
      takeOver: (connectionId) => this.#takeOverUnheld(connectionId),
    });
    // A registration at another node of an environment this node holds: a fresh listener runtime.
    this.#subscription = store.connection.subscribe(`${parts.cluster.name}.registered-again.*`, {
      callback: (error, message) => {
        if (error) return;
        const connectionId = message.subject.slice(message.subject.lastIndexOf(".") + 1);
        const environment = parts.registry.get(connectionId);
        if (environment && this.#leases.held(connectionId)) parts.registry.registeredAgain(environment);
      },
    });
    parts.registry.joinCluster(this);
  }

  /** Connects to the cluster's NATS servers and joins (throws INVALID_OPTIONS when they cannot be reached). */
  static async start(parts: RelayClusterParts): Promise<RelayCluster> {
    const store = await openClusterStore(parts.cluster, {
      outstandingCallTtlMs: parts.options.outstandingCallTtlMs,
      usageTtlMs: usageLifeMs(parts.cluster.leaseTtlMs) * 2,
      timers: parts.options.timers,
    });
    const cluster = new RelayCluster(parts, store);
    try {
      await cluster.#usage.start();
      cluster.#orphans.start();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    parts.options.logger.info("relay: joined the cluster", { node: cluster.nodeId, servers: parts.cluster.servers.join(",") });
    return cluster;
  }

  journalFor(connectionId: string): EnvironmentJournal {
    const { logger, timers } = this.#parts.options;
    const report = (what: string) => (error: unknown) =>
      logger.warn(`relay: cluster store: ${what} failed`, { connectionId, error: String(error) });
    return {
      mayAct: () => this.#leases.held(connectionId),
      recordCall: async (requestId, runtimeKey, frame) => {
        await this.#calls.record(connectionId, { requestId, runtimeKey, frame: frame.data.toString("utf8"), createdAt: timers.now() });
      },
      answerCall: (requestId, runtimeKey, answer) =>
        void this.#calls
          .answered(connectionId, requestId, runtimeKey, answer.data.toString("utf8"), timers.now())
          .catch(report("recording an answer")),
      forgetCall: (requestId) => void this.#calls.forget(connectionId, requestId).catch(report("forgetting a call")),
      forgetAllCalls: () => void this.#calls.forgetAll(connectionId).catch(report("forgetting the calls")),
      setRegistrant: (runtimeKey, identity) =>
        void this.#directory.setRegistrant(connectionId, runtimeKey, identity).catch(report("recording a registrant")),
      sessionCreated: (identity, keyId, binding) =>
        void this.#directory.setSession(connectionId, identity, { keyId, binding }).catch(report("recording a session")),
      sessionClosed: (identity) => void this.#directory.setSession(connectionId, identity, undefined).catch(report("forgetting a session")),
      listenerChanged: (ready, connectedAt) => this.#leases.setListener(connectionId, ready, connectedAt),
    };
  }

  fenced(connectionId: string): void {
    this.#parts.options.logger.warn("relay: this node no longer holds the environment; its sockets were closed (1012)", { connectionId });
  }

  removedForGood(identity: EnvironmentIdentity, tenant: Tenant): void {
    const { connectionId } = identity;
    const record: EnvironmentRecord = { ...identity, tenant: tenant.name, registeredAt: 0 };
    const report = (error: unknown) =>
      this.#parts.options.logger.warn("relay: cluster store: removing an environment failed", { connectionId, error: String(error) });
    void Promise.all([this.#directory.remove(record), this.#calls.forgetAll(connectionId)])
      .catch(report)
      .finally(() => this.#leases.release(connectionId));
  }

  /**
   * Where an upgrade for `connectionId` by `tenant` goes. `hop`: it was piped here by another
   * node (it is never piped on). Waits for a dead holder's lease to run out (at most twice the TTL).
   */
  async route(connectionId: string, tenant: Tenant, hop: boolean): Promise<UpgradeRoute> {
    const { timers } = this.#parts.options;
    const deadline = timers.now() + this.#parts.cluster.leaseTtlMs * 2 + 1_000;
    for (;;) {
      if (this.#parts.registry.get(connectionId) && this.#leases.held(connectionId)) return { kind: "local" };
      const pending = this.#adopting.get(connectionId);
      if (pending) {
        const route = await pending;
        if (route) return route;
        continue;
      }
      const record = await this.#directory.get(connectionId);
      if (!record || record.tenant !== tenant.name) return { kind: "not-found" };
      const holder = await this.#leases.holder(connectionId);
      if (holder && holder.nodeId !== this.nodeId) {
        if (hop) return { kind: "busy", message: "the environment is held by another relay node; reconnect" };
        return { kind: "pipe", address: holder.address, nodeId: holder.nodeId };
      }
      if (!holder || this.#leases.held(connectionId)) {
        const route = await this.#adoptOnce(record);
        if (route) return route;
      }
      if (timers.now() > deadline) return { kind: "busy", message: "the environment's previous relay node still holds it; reconnect" };
      await this.#wait(100);
    }
  }

  /** Called when a pipe to `nodeId` could not connect: its lease is waited out (see {@link route}). */
  async unreachable(nodeId: string, connectionId: string): Promise<void> {
    this.#parts.options.logger.info("relay: the node holding an environment is unreachable; waiting for its lease to run out", {
      connectionId,
      node: nodeId,
    });
    await this.#wait(Math.min(500, this.#parts.cluster.leaseTtlMs / 3));
  }

  #wait(ms: number): Promise<void> {
    return new Promise((resolve) => unrefTimer(this.#parts.options.timers.setTimeout(resolve, ms)));
  }

  /** An environment on record that no node held at the sweep: taken over here unless a node took it meanwhile. */
  async #takeOverUnheld(connectionId: string): Promise<boolean> {
    if (this.#stopping || this.#parts.registry.get(connectionId) || this.#adopting.has(connectionId)) return false;
    if (await this.#leases.holder(connectionId)) return false;
    const record = await this.#directory.get(connectionId);
    if (!record) return false;
    return (await this.#adoptOnce(record))?.kind === "local";
  }

  /** {@link #adopt}, known to {@link route} while it runs (an upgrade meanwhile waits for it). */
  #adoptOnce(record: EnvironmentRecord): Promise<UpgradeRoute | undefined> {
    const { connectionId } = record;
    const adoption = this.#adopt(record).finally(() => this.#adopting.delete(connectionId));
    this.#adopting.set(connectionId, adoption);
    return adoption;
  }

  /** Takes the lease (if free) and the environment with it; `undefined` when another node was faster. */
  async #adopt(record: EnvironmentRecord): Promise<UpgradeRoute | undefined> {
    const { registry, options } = this.#parts;
    const { connectionId } = record;
    if (!(await this.#leases.acquire(connectionId))) return undefined;
    const tenant = this.#parts.tenant(record.tenant);
    if (!tenant) {
      await this.#leases.release(connectionId);
      return { kind: "not-found" };
    }
    const [sessions, registrants, calls] = await Promise.all([
      this.#directory.sessions(connectionId),
      this.#directory.registrants(connectionId),
      this.#calls.list(connectionId),
    ]);
    const environment = registry.get(connectionId) ?? registry.adopt(identityOf(record), tenant);
    const frames = calls.flatMap((call) => {
      const frame = call.answer === undefined ? RelayFrame.read(call.frame) : undefined;
      return frame ? [{ requestId: call.requestId, runtimeKey: call.runtimeKey, frame }] : [];
    });
    const answers = calls.flatMap((call) => {
      const frame = call.answer === undefined ? undefined : RelayFrame.read(call.answer);
      return frame ? [{ requestId: call.requestId, runtimeKey: call.runtimeKey, frame, answeredAt: call.answeredAt ?? 0 }] : [];
    });
    environment.restore(sessions, registrants, frames, answers);
    options.logger.info("relay: environment taken over from the cluster store", {
      connectionId,
      calls: frames.length,
      answers: answers.length,
      node: this.nodeId,
    });
    return { kind: "local" };
  }

  /** `POST /v1/environments/register` on any node: the shared directory decides the connection id. */
  async register(
    principal: Principal,
    request: RegistrationRequest,
    wsBase: string,
  ): Promise<{ answer: RegistrationAnswer } | { refusal: RegistrationRefusal }> {
    const { tenant } = principal;
    const fresh: EnvironmentRecord = {
      connectionId: `env-${randomUUID()}`,
      id: environmentIdOf(request.deviceId, request.listenerInstanceId),
      tenant: tenant.name,
      deviceId: request.deviceId,
      listenerInstanceId: request.listenerInstanceId,
      connectionName: request.connectionName,
      sandboxId: undefined,
      registeredAt: this.#parts.options.timers.now(),
    };
    const limit = tenant.limit("environment");
    const existing = await this.#directory.list(tenant.name);
    const known = existing.some(
      (record) => record.deviceId === request.deviceId && record.listenerInstanceId === request.listenerInstanceId,
    );
    if (!known && existing.length >= limit) {
      return { refusal: { status: 429, kind: "tenant-limit", message: `the tenant has ${limit} environments (maxEnvironmentsPerTenant)` } };
    }
    const outcome = await this.#directory.register(fresh);
    if (outcome.kind === "device-of-another-tenant") {
      return { refusal: { status: 409, kind: "device-of-another-tenant", message: "this deviceId is registered by another tenant" } };
    }
    const { connectionId } = outcome.record;
    if (outcome.kind === "again") await this.#registeredAgain(connectionId);
    else this.#parts.options.logger.info("relay: listener registered", { connectionId, tenant: tenant.name, node: this.nodeId });
    return { answer: registrationAnswer(connectionId, wsBase, this.#parts.options.listenerMode) };
  }

  /** A known listener key registered again: a fresh listener runtime, wherever the environment is held. */
  async #registeredAgain(connectionId: string): Promise<void> {
    const environment = this.#parts.registry.get(connectionId);
    if (environment && this.#leases.held(connectionId)) {
      this.#parts.registry.registeredAgain(environment);
      return;
    }
    const holder = await this.#leases.holder(connectionId);
    if (holder) this.#store.connection.publish(`${this.#parts.cluster.name}.registered-again.${connectionId}`);
    else await this.#calls.forgetAll(connectionId);
  }

  /** `GET /v1/environments`: the tenant's environments on every node (connected = its listener is, at the holder). */
  async connections(tenant: Tenant): Promise<ClusterConnection[]> {
    const records = await this.#directory.list(tenant.name);
    const holders = await Promise.all(records.map((record) => this.#leases.holder(record.connectionId)));
    return records.map((record, index) => {
      const holder = holders[index];
      const connected = holder?.listenerReady === true;
      return {
        id: record.id,
        connectionId: connected ? record.connectionId : null,
        deviceId: record.deviceId,
        connectionName: record.connectionName,
        connectedAt: connected ? (holder?.connectedAt ?? null) : null,
      };
    });
  }

  /** Leaves the cluster: every environment let go (sockets closed with 1012) and its lease given up, so others take over at once. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      await this.#orphans.stop();
      this.#parts.registry.evictAll();
      await Promise.all([this.#leases.releaseAll(), this.#usage.stop()]);
      this.#subscription.unsubscribe();
      await this.#store.close();
    })();
    return this.#stopping;
  }
}
