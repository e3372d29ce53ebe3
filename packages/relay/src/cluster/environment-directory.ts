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

  /** Every environment's record (of `tenant` only, when given). */
  async list(tenant?: string): Promise<EnvironmentRecord[]> {
    const keys: string[] = [];
    for await (const key of await this.#kv.keys("conn.>")) keys.push(key);
    const records = await Promise.all(keys.map((key) => this.get(key.slice("conn.".length))));
    return records.filter(
      (record): record is EnvironmentRecord => record !== undefined && (tenant === undefined || record.tenant === tenant),
    );
  }

  /**
   * Registers (device, instance) for `tenant`: the existing environment (`again`, same connection
   * id) or a new one made from `fresh` (`new`). A device another tenant registered is refused.
   */
  async register(fresh: EnvironmentRecord): Promise<DirectoryRegistration> {
    const owner = await this.#claimDevice(fresh.deviceId, fresh.tenant);
    if (!owner) return { kind: "device-of-another-tenant" };
    const key = listenerKey(fresh.deviceId, fresh.listenerInstanceId);
    for (let attempt = 0; attempt < 5; attempt++) {
      const existing = await this.#kv.get(key);
      if (existing && existing.operation === "PUT") {
        const connectionId = (decodeJson(existing.value) as { connectionId?: unknown } | undefined)?.connectionId;
        const record = typeof connectionId === "string" ? await this.get(connectionId) : undefined;
        // Another tenant's environment under this key: never handed out, never replaced.
        if (record && record.tenant !== fresh.tenant) return { kind: "device-of-another-tenant" };
        if (record) return { kind: "again", record };
        await this.#kv.delete(key, { previousSeq: existing.revision }).catch(() => {});
        continue;
      }
      await this.#kv.put(connectionKey(fresh.connectionId), encodeJson(fresh));
      try {
        await this.#kv.create(key, encodeJson({ connectionId: fresh.connectionId }));
        return { kind: "new", record: fresh };
      } catch (error) {
        await this.#kv.delete(connectionKey(fresh.connectionId)).catch(() => {});
        if (!isWrongRevision(error)) throw error;
      }
    }
    throw new Error("relay: registration kept racing with another node's");
  }

  /**
   * Removes an environment for good (its listener stayed away; it was removed). The device stays
   * its tenant's while another environment of it is left (several listener instances of one device).
   */
  async remove(record: EnvironmentRecord): Promise<void> {
    const registrants: string[] = [];
    for await (const key of await this.#kv.keys(`${registrantPrefix(record.connectionId)}.>`)) registrants.push(key);
    for await (const key of await this.#kv.keys(`${sessionPrefix(record.connectionId)}.>`)) registrants.push(key);
    await Promise.all([
      this.#kv.delete(connectionKey(record.connectionId)),
      this.#kv.delete(listenerKey(record.deviceId, record.listenerInstanceId)),
      ...registrants.map((key) => this.#kv.delete(key)),
    ]);
    const others = (await this.list()).filter((other) => other.deviceId === record.deviceId);
    if (others.length === 0) await this.#kv.delete(deviceKey(record.deviceId));
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

  /** The device's tenant after this claim: `true` when it is `tenant`. */
  async #claimDevice(deviceId: string, tenant: string): Promise<boolean> {
    const key = deviceKey(deviceId);
    try {
      await this.#kv.create(key, encodeJson({ tenant }));
      return true;
    } catch (error) {
      if (!isWrongRevision(error)) throw error;
    }
    const entry = await this.#kv.get(key);
    const owner = entry && entry.operation === "PUT" ? (decodeJson(entry.value) as { tenant?: unknown } | undefined)?.tenant : undefined;
    return owner === tenant;
  }
}
