/**
 * The cluster's record of environments (docs/relay-cluster.md "What is shared"), in the
 * `<name>_environments` bucket: one record per environment under its connection id, the
 * listener key (device, instance) → connection id, and device → tenant. Registering a known key
 * keeps its connection id on every node and across restarts; a device belongs to the first
 * tenant that registers it (create-if-absent decides a race). Also holds each runtime's tool
 * registrant, so a node that takes an environment over offers calls to the same session.
 */
import type { KV } from "@nats-io/kv";
import { boundTo, OPEN_BINDING, type RuntimeBinding } from "../runtime-binding.js";
import { decodeJson, encodeJson, isWrongRevision, keyToken } from "./cluster-store.js";

/** What every node knows of an environment. */
export interface EnvironmentRecord {
  connectionId: string;
  id: string;
  tenant: string;
  deviceId: string;
  listenerInstanceId: string | undefined;
  connectionName: string;
  sandboxId: string | undefined;
  registeredAt: number;
}

function parseRecord(value: unknown): EnvironmentRecord | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const text = (name: string) => (typeof record[name] === "string" ? (record[name] as string) : undefined);
  const connectionId = text("connectionId");
  const id = text("id");
  const tenant = text("tenant");
  const deviceId = text("deviceId");
  const connectionName = text("connectionName");
  if (!connectionId || !id || !tenant || !deviceId || !connectionName || typeof record.registeredAt !== "number") return undefined;
  return {
    connectionId,
    id,
    tenant,
    deviceId,
    listenerInstanceId: text("listenerInstanceId"),
    connectionName,
    sandboxId: text("sandboxId"),
    registeredAt: record.registeredAt,
  };
}

const connectionKey = (connectionId: string) => `conn.${connectionId}`;
const listenerKey = (deviceId: string, listenerInstanceId: string | undefined) =>
  `key.${keyToken(JSON.stringify([deviceId, listenerInstanceId ?? null]))}`;
const deviceKey = (deviceId: string) => `device.${keyToken(deviceId)}`;
const tenantPrefix = (tenant: string) => `tenant.${keyToken(tenant)}`;
const tenantKey = (tenant: string, connectionId: string) => `${tenantPrefix(tenant)}.${connectionId}`;
const registrantPrefix = (connectionId: string) => `registrant.${connectionId}`;
const sessionPrefix = (connectionId: string) => `session.${connectionId}`;

/** A named SDK session as the store keeps it: the key and runtime its identity is bound to. */
export interface SessionRecord {
  keyId: string;
  binding: RuntimeBinding;
}

function parseBinding(value: unknown): RuntimeBinding | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (record.state === "open") return OPEN_BINDING;
  if (typeof record.agentId !== "string" || record.agentId === "") return undefined;
  if (record.state === "agent") return { state: "agent", agentId: record.agentId };
  if (record.state === "bound" && typeof record.conversationId === "string" && record.conversationId !== "")
    return boundTo(record.agentId, record.conversationId);
  return undefined;
}

/** What a registration found. */
export type DirectoryRegistration = { kind: "new" | "again"; record: EnvironmentRecord } | { kind: "device-of-another-tenant" };

export class EnvironmentDirectory {
  #kv: KV;

  constructor(kv: KV) {
    this.#kv = kv;
  }

  async get(connectionId: string): Promise<EnvironmentRecord | undefined> {
    const entry = await this.#kv.get(connectionKey(connectionId));
    return entry && entry.operation === "PUT" ? parseRecord(decodeJson(entry.value)) : undefined;
  }

  /** The connection id of every environment on record, of every tenant (keys only). */
  async connectionIds(): Promise<string[]> {
    const connectionIds: string[] = [];
    for await (const key of await this.#kv.keys("conn.>")) connectionIds.push(key.slice("conn.".length));
    return connectionIds;
  }

  /** The environments of `tenant`, read through its index (`tenant.<hash>.<connectionId>`), never another tenant's records. */
  async list(tenant: string): Promise<EnvironmentRecord[]> {
    const prefix = `${tenantPrefix(tenant)}.`;
    const connectionIds: string[] = [];
    for await (const key of await this.#kv.keys(`${prefix}>`)) connectionIds.push(key.slice(prefix.length));
    const records = await Promise.all(connectionIds.map((connectionId) => this.get(connectionId)));
    return records.filter((record): record is EnvironmentRecord => record !== undefined && record.tenant === tenant);
  }

  /**
   * Registers (device, instance) for `tenant`: the existing environment (`again`, same connection
   * id) or a new one made from `fresh` (`new`). A device another tenant registered is refused.
   */
  async register(fresh: EnvironmentRecord): Promise<DirectoryRegistration> {
    const claim = await this.#ownDevice(fresh.deviceId, fresh.tenant);
    if (claim === undefined) return { kind: "device-of-another-tenant" };
    const registration = await this.#registerKey(fresh);
    if (registration.kind !== "new") return registration;
    // A removal of the device's last environment may have deleted the device's owner meanwhile:
    // the claim is confirmed after the environment exists (see remove()).
    if ((await this.#ownDevice(fresh.deviceId, fresh.tenant, claim)) !== undefined) return registration;
    await this.#unregister(fresh);
    return { kind: "device-of-another-tenant" };
  }

  async #registerKey(fresh: EnvironmentRecord): Promise<DirectoryRegistration> {
    const key = listenerKey(fresh.deviceId, fresh.listenerInstanceId);
    for (let attempt = 0; attempt < 5; attempt++) {
      const existing = await this.#kv.get(key);
      if (existing && existing.operation === "PUT") {
        const connectionId = (decodeJson(existing.value) as { connectionId?: unknown } | undefined)?.connectionId;
        const record = typeof connectionId === "string" ? await this.get(connectionId) : undefined;
        // Another tenant's environment under this key: never handed out, never replaced.
        if (record && record.tenant !== fresh.tenant) return { kind: "device-of-another-tenant" };
        if (record) {
          // A record written before the index existed is listed from now on.
          await this.#index(record);
          return { kind: "again", record };
        }
        await this.#kv.delete(key, { previousSeq: existing.revision }).catch(() => {});
        continue;
      }
      await this.#kv.put(connectionKey(fresh.connectionId), encodeJson(fresh));
      await this.#index(fresh);
      try {
        await this.#kv.create(key, encodeJson({ connectionId: fresh.connectionId }));
        return { kind: "new", record: fresh };
      } catch (error) {
        await Promise.all([
          this.#kv.delete(connectionKey(fresh.connectionId)).catch(() => {}),
          this.#kv.delete(tenantKey(fresh.tenant, fresh.connectionId)).catch(() => {}),
        ]);
        if (!isWrongRevision(error)) throw error;
      }
    }
    throw new Error("relay: registration kept racing with another node's");
  }

  /**
   * Removes an environment for good (its listener stayed away; it was removed). The device stays
   * its tenant's while another environment of it is left (several listener instances of one
   * device). The device's owner is deleted only at the revision read before the others were
   * counted: a registration that confirmed its claim meanwhile moved the revision, so it stays.
   */
  async remove(record: EnvironmentRecord): Promise<void> {
    const device = await this.#kv.get(deviceKey(record.deviceId));
    await this.#unregister(record);
    const others = (await this.list(record.tenant)).filter((other) => other.deviceId === record.deviceId);
    if (others.length === 0 && device?.operation === "PUT") await this.#deleteAt(deviceKey(record.deviceId), device.revision);
  }

  /** Deletes an environment's keys: its record, its tenant index, its listener key, registrants and sessions. */
  async #unregister(record: EnvironmentRecord): Promise<void> {
    const keys: string[] = [];
    for await (const key of await this.#kv.keys(`${registrantPrefix(record.connectionId)}.>`)) keys.push(key);
    for await (const key of await this.#kv.keys(`${sessionPrefix(record.connectionId)}.>`)) keys.push(key);
    await Promise.all([
      this.#kv.delete(connectionKey(record.connectionId)),
      this.#kv.delete(tenantKey(record.tenant, record.connectionId)),
      this.#deleteListenerKey(record),
      ...keys.map((key) => this.#kv.delete(key)),
    ]);
  }

  /** The listener key, only while it still names this environment (a later registration may own it). */
  async #deleteListenerKey(record: EnvironmentRecord): Promise<void> {
    const key = listenerKey(record.deviceId, record.listenerInstanceId);
    const entry = await this.#kv.get(key);
    if (entry?.operation !== "PUT") return;
    if ((decodeJson(entry.value) as { connectionId?: unknown } | undefined)?.connectionId === record.connectionId)
      await this.#deleteAt(key, entry.revision);
  }

  /** The session identity that registered tools for `runtimeKey` last (`undefined`: none). */
  async registrants(connectionId: string): Promise<Map<string, string>> {
    const result = new Map<string, string>();
    for await (const key of await this.#kv.keys(`${registrantPrefix(connectionId)}.>`)) {
      const entry = await this.#kv.get(key);
      const value = entry && entry.operation === "PUT" ? (decodeJson(entry.value) as Record<string, unknown> | undefined) : undefined;
      if (typeof value?.runtimeKey === "string" && typeof value.identity === "string") result.set(value.runtimeKey, value.identity);
    }
    return result;
  }

  /** Records (or clears, with `undefined`) the registrant of `runtimeKey`. */
  async setRegistrant(connectionId: string, runtimeKey: string, identity: string | undefined): Promise<void> {
    const key = `${registrantPrefix(connectionId)}.${keyToken(runtimeKey)}`;
    if (identity === undefined) await this.#kv.delete(key);
    else await this.#kv.put(key, encodeJson({ runtimeKey, identity }));
  }

  /** The named SDK sessions of an environment: identity → the key and runtime it is bound to. */
  async sessions(connectionId: string): Promise<Map<string, SessionRecord>> {
    const result = new Map<string, SessionRecord>();
    for await (const key of await this.#kv.keys(`${sessionPrefix(connectionId)}.>`)) {
      const entry = await this.#kv.get(key);
      const value = entry?.operation === "PUT" ? (decodeJson(entry.value) as Record<string, unknown> | undefined) : undefined;
      const binding = parseBinding(value?.binding);
      if (typeof value?.identity === "string" && typeof value.keyId === "string" && binding)
        result.set(value.identity, { keyId: value.keyId, binding });
    }
    return result;
  }

  /** Records a named session (created on the holder), or forgets it (`undefined`: closed for good). */
  async setSession(connectionId: string, identity: string, session: SessionRecord | undefined): Promise<void> {
    const key = `${sessionPrefix(connectionId)}.${keyToken(identity)}`;
    if (session === undefined) await this.#kv.delete(key);
    else await this.#kv.put(key, encodeJson({ identity, ...session }));
  }

  /**
   * Makes `tenant` the device's owner: creates the owner record, or writes it again at `revision`
   * (the revision this registration read; `undefined`: none yet). Every registration writes it
   * twice — when it claims the device and once its environment exists — so a removal that read an
   * older revision deletes nothing (see remove()). The new revision, or `undefined` when another
   * tenant owns the device.
   */
  async #ownDevice(deviceId: string, tenant: string, revision?: number): Promise<number | undefined> {
    const key = deviceKey(deviceId);
    const value = encodeJson({ tenant });
    let expected = revision;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        return expected === undefined ? await this.#kv.create(key, value) : await this.#kv.update(key, value, expected);
      } catch (error) {
        if (!isWrongRevision(error)) throw error;
      }
      const entry = await this.#kv.get(key);
      if (entry?.operation !== "PUT") {
        expected = undefined;
        continue;
      }
      if ((decodeJson(entry.value) as { tenant?: unknown } | undefined)?.tenant !== tenant) return undefined;
      expected = entry.revision;
    }
    throw new Error("relay: owning a device kept racing with another node's");
  }

  /** Deletes `key` only at `revision`; a key that moved on (written again, deleted) is left as it is. */
  async #deleteAt(key: string, revision: number): Promise<void> {
    await this.#kv.delete(key, { previousSeq: revision }).catch((error: unknown) => {
      if (!isWrongRevision(error)) throw error;
    });
  }

  /** The tenant's index entry for `record` (`list` reads only these). */
  async #index(record: EnvironmentRecord): Promise<void> {
    await this.#kv.put(tenantKey(record.tenant, record.connectionId), encodeJson({ connectionId: record.connectionId }));
  }
}
