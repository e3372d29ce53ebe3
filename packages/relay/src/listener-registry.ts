/**
 * The environments the relay knows, keyed on the listener's (deviceId, listenerInstanceId) and
 * on the connection id handed out at registration, each owned by the tenant that registered it.
 * A registration for a known key by the same tenant keeps the environment and its connection
 * id; only a removed environment (1008) yields a new one. A device belongs to the first tenant
 * that registers it, as long as it has an environment: another tenant's registration of it is
 * refused (409) and the owner's listener is not touched.
 */
import { createHash, randomUUID } from "node:crypto";
import { Environment, type EnvironmentContext, type EnvironmentIdentity } from "./environment.js";
import type { EnvironmentJournal } from "./environment-journal.js";
import { RELAY_CLOSE } from "./relay-close-codes.js";
import type { ListenerMode } from "./relay-options.js";
import type { Principal } from "./tenant-directory.js";
import type { Tenant } from "./tenant.js";

/** `POST /v1/environments/register` body, validated. */
export interface RegistrationRequest {
  deviceId: string;
  listenerInstanceId: string | undefined;
  connectionName: string;
  metadata: Record<string, unknown> | undefined;
}

/** `POST /v1/environments/register` answer. */
export interface RegistrationAnswer {
  connectionId: string;
  wsUrl: string;
  supportsSplitStatusChannels: boolean;
  supportsPairedListenerGenerations: boolean;
}

const MAX_ID_LENGTH = 512;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function boundedString(value: unknown, allowEmpty: boolean): value is string {
  return typeof value === "string" && value.length <= MAX_ID_LENGTH && (allowEmpty || value.length > 0);
}

/** Checks a register body; returns an error text for a 400 answer. */
export function parseRegistration(body: unknown): RegistrationRequest | string {
  if (!isRecord(body)) return "body must be a JSON object";
  if (!boundedString(body.deviceId, false)) return "deviceId must be a non-empty string";
  if (!boundedString(body.connectionName, false)) return "connectionName must be a non-empty string";
  if (body.listenerInstanceId !== undefined && !boundedString(body.listenerInstanceId, false)) {
    return "listenerInstanceId must be a non-empty string when present";
  }
  if (body.metadata !== undefined && !isRecord(body.metadata)) return "metadata must be an object when present";
  return {
    deviceId: body.deviceId,
    listenerInstanceId: body.listenerInstanceId as string | undefined,
    connectionName: body.connectionName,
    metadata: body.metadata as Record<string, unknown> | undefined,
  };
}

function environmentKey(deviceId: string, listenerInstanceId: string | undefined): string {
  return JSON.stringify([deviceId, listenerInstanceId ?? null]);
}

/** A refused registration: the HTTP status (403, 409 or 429; the listener retries only 429) and the reason. */
export interface RegistrationRefusal {
  status: 403 | 409 | 429;
  message: string;
  kind: "device-of-another-tenant" | "tenant-limit" | "sandbox-device";
}

/** Says whether `principal` may register `deviceId` (sandbox devices belong to their sandbox's key alone). */
export type DeviceGuard = (principal: Principal, deviceId: string) => RegistrationRefusal | undefined;

/** Cluster mode's part in the registry (docs/relay-cluster.md); a single relay has none. */
export interface RegistryClusterHooks {
  /** The shared records and lease of one environment this node holds. */
  journalFor(connectionId: string): EnvironmentJournal;
  /** This node may no longer act for the environment: it was let go here (not removed). */
  fenced(connectionId: string): void;
  /** The environment was removed for good (its listener stayed away, or it was removed): its shared records go too. */
  removedForGood(identity: EnvironmentIdentity, tenant: Tenant): void;
}

type RegistryContext = Omit<EnvironmentContext, "onExpired" | "journal" | "onFenced">;

/** The answer to a registration: where the listener connects, and which socket modes it may use. */
export function registrationAnswer(connectionId: string, wsBase: string, mode: ListenerMode): RegistrationAnswer {
  return {
    connectionId,
    wsUrl: `${wsBase}/v1/environments/${encodeURIComponent(connectionId)}/listener/ws`,
    supportsSplitStatusChannels: mode !== "single",
    supportsPairedListenerGenerations: mode === "paired",
  };
}

/** A new environment's identity (a fresh connection id; the environment id is derived from the listener key). */
function newEnvironmentIdentity(request: RegistrationRequest, principal: Principal): EnvironmentIdentity {
  return {
    id: environmentIdOf(request.deviceId, request.listenerInstanceId),
    connectionId: `env-${randomUUID()}`,
    deviceId: request.deviceId,
    listenerInstanceId: request.listenerInstanceId,
    connectionName: request.connectionName,
    sandboxId: principal.sandbox?.sandboxId,
  };
}

/** The stable id `GET /v1/environments` shows for a listener key. */
export function environmentIdOf(deviceId: string, listenerInstanceId: string | undefined): string {
  return `environment-${createHash("sha256").update(environmentKey(deviceId, listenerInstanceId)).digest("hex").slice(0, 24)}`;
}

export class ListenerRegistry {
  #byKey = new Map<string, Environment>();
  #byConnectionId = new Map<string, Environment>();
  /** Which tenant owns each device, and in how many environments. */
  #devices = new Map<string, { tenant: Tenant; environments: number }>();
  #context: RegistryContext;
  #guard: DeviceGuard | undefined;
  #cluster: RegistryClusterHooks | undefined;

  constructor(context: RegistryContext) {
    this.#context = context;
  }

  /** Cluster mode: environments keep shared records, and are let go when this node loses them. */
  joinCluster(hooks: RegistryClusterHooks): void {
    this.#cluster = hooks;
  }

  /** Checks every registration against `guard` first (the sandbox registry's). */
  guardDevices(guard: DeviceGuard): void {
    this.#guard = guard;
  }

  /** Registers (or re-registers) a listener; `wsBase` is `ws://host:port` as the listener reached us. */
  register(
    principal: Principal,
    request: RegistrationRequest,
    wsBase: string,
  ): { answer: RegistrationAnswer } | { refusal: RegistrationRefusal } {
    const { tenant } = principal;
    const { logger } = this.#context.options;
    const key = environmentKey(request.deviceId, request.listenerInstanceId);
    const guarded = this.#guard?.(principal, request.deviceId);
    if (guarded) {
      logger.warn("relay: registration refused by the sandbox guard", { tenant: tenant.name, kind: guarded.kind });
      return { refusal: guarded };
    }
    const device = this.#devices.get(request.deviceId);
    if (device && device.tenant !== tenant) {
      logger.warn("relay: registration of another tenant's device refused", { tenant: tenant.name });
      return { refusal: { status: 409, kind: "device-of-another-tenant", message: "this deviceId is registered by another tenant" } };
    }
    let environment = this.#byKey.get(key);
    if (environment) {
      this.registeredAgain(environment);
    } else {
      if (!tenant.reserve("environment")) {
        return {
          refusal: {
            status: 429,
            kind: "tenant-limit",
            message: `the tenant has ${tenant.limit("environment")} environments (maxEnvironmentsPerTenant)`,
          },
        };
      }
      environment = this.#create(newEnvironmentIdentity(request, principal), tenant);
      logger.info("relay: listener registered", { connectionId: environment.identity.connectionId, tenant: tenant.name });
      this.#context.emit("environment-registered", environment.info());
    }
    return { answer: registrationAnswer(environment.identity.connectionId, wsBase, this.#context.options.listenerMode) };
  }

  /**
   * A registration means a fresh listener runtime: an older process holding this identity is
   * replaced (the listener exits on exactly this close), and calls it owned cannot be answered.
   */
  registeredAgain(environment: Environment): void {
    environment.listener.close(RELAY_CLOSE.replacedListener.code, RELAY_CLOSE.replacedListener.reason);
    environment.forgetOutstandingCalls();
    this.#context.options.logger.info("relay: listener registered again", {
      connectionId: environment.identity.connectionId,
      tenant: environment.tenant.name,
    });
  }

  /**
   * Cluster mode: this node took the environment's lease and holds it from now on, made from its
   * shared record (the same connection id on every node).
   */
  adopt(identity: EnvironmentIdentity, tenant: Tenant): Environment {
    const existing = this.#byConnectionId.get(identity.connectionId);
    if (existing) return existing;
    // Registered (and counted against the tenant's cap) already: this node only takes it over.
    tenant.take("environment");
    const environment = this.#create(identity, tenant);
    this.#context.options.logger.info("relay: environment taken over", { connectionId: identity.connectionId, tenant: tenant.name });
    return environment;
  }

  /** Cluster mode: lets an environment go from this node (its sockets closed with 1012), keeping its shared records. */
  evict(environment: Environment): void {
    this.#forget(environment, RELAY_CLOSE.movedNode.code, RELAY_CLOSE.movedNode.code, RELAY_CLOSE.movedNode.reason, false);
  }

  #create(identity: EnvironmentIdentity, tenant: Tenant): Environment {
    const cluster = this.#cluster;
    const environment = new Environment(identity, tenant, {
      ...this.#context,
      onExpired: (expired) =>
        this.remove(
          expired,
          RELAY_CLOSE.environmentGone.code,
          RELAY_CLOSE.environmentGone.code,
          "Environment gone: listener did not reconnect",
        ),
      journal: cluster?.journalFor(identity.connectionId),
      onFenced: cluster
        ? (fenced) => {
            this.evict(fenced);
            cluster.fenced(fenced.identity.connectionId);
          }
        : undefined,
    });
    const device = this.#devices.get(identity.deviceId);
    this.#byKey.set(environmentKey(identity.deviceId, identity.listenerInstanceId), environment);
    this.#byConnectionId.set(identity.connectionId, environment);
    this.#devices.set(identity.deviceId, { tenant, environments: (device?.environments ?? 0) + 1 });
    return environment;
  }

  /** One environment by connection id — of `tenant` only, when given. */
  get(connectionId: string, tenant?: Tenant): Environment | undefined {
    const environment = this.#byConnectionId.get(connectionId);
    return environment && (tenant === undefined || environment.tenant === tenant) ? environment : undefined;
  }

  /** Every environment — of `tenant` only, when given. */
  list(tenant?: Tenant): Environment[] {
    const all = [...this.#byConnectionId.values()];
    return tenant === undefined ? all : all.filter((environment) => environment.tenant === tenant);
  }

  /** Removes an environment for good (in cluster mode, its shared records too); its sockets are closed with the given codes. */
  remove(environment: Environment, listenerCode: number, sdkCode: number, reason: string): void {
    this.#forget(environment, listenerCode, sdkCode, reason, true);
  }

  #forget(environment: Environment, listenerCode: number, sdkCode: number, reason: string, forGood: boolean): void {
    const { connectionId, deviceId, listenerInstanceId } = environment.identity;
    if (this.#byConnectionId.get(connectionId) !== environment) return;
    this.#byConnectionId.delete(connectionId);
    this.#byKey.delete(environmentKey(deviceId, listenerInstanceId));
    const device = this.#devices.get(deviceId);
    if (device && --device.environments <= 0) this.#devices.delete(deviceId);
    environment.tenant.release("environment");
    environment.remove(listenerCode, sdkCode, reason);
    if (!forGood) {
      this.#context.options.logger.info("relay: environment let go (another node holds it now)", { connectionId });
      return;
    }
    this.#cluster?.removedForGood(environment.identity, environment.tenant);
    this.#context.options.logger.info("relay: environment removed", { connectionId, reason });
    this.#context.emit("environment-removed", connectionId, reason);
  }

  /** Cluster mode, shutdown: every environment let go (sockets closed with 1012: clients reconnect to another node), shared records kept. */
  evictAll(): void {
    for (const environment of this.list()) this.evict(environment);
  }

  /** Removes every environment of `deviceId` (a reaped sandbox's): listener and SDK sockets closed with 1008. */
  removeDevice(deviceId: string, reason: string): number {
    const gone = this.list().filter((environment) => environment.identity.deviceId === deviceId);
    for (const environment of gone) this.remove(environment, RELAY_CLOSE.environmentGone.code, RELAY_CLOSE.environmentGone.code, reason);
    return gone.length;
  }

  /** Shutdown: every environment removed, sockets closed as "going away". */
  removeAll(reason: string): void {
    for (const environment of this.list()) this.remove(environment, RELAY_CLOSE.goingAway.code, RELAY_CLOSE.goingAway.code, reason);
  }

  sweep(): void {
    for (const environment of this.#byConnectionId.values()) environment.sweep();
  }
}
