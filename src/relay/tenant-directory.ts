/**
 * The relay's tenants and the keys that lead to them. A presented key is matched against every
 * configured key in constant time (SHA-256 digests, `timingSafeEqual`, no early exit); a match
 * yields a {@link Principal}: the tenant, and an opaque id of the key (sessions are bound to it).
 * Nothing here logs or returns a key.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { RelayLogger } from "./relay-options.js";
import { DEFAULT_TENANT } from "./resolve-relay-options.js";
import { Tenant, type TenantLimits } from "./tenant.js";

/** Who sent a request: a tenant, through one of its keys. */
export interface Principal {
  readonly tenant: Tenant;
  /** `k1`, `k2`, … by key; `anonymous` when the relay has no keys. Never the key. */
  readonly keyId: string;
}

interface KnownKey {
  digest: Buffer;
  principal: Principal;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

export class TenantDirectory {
  #keys: KnownKey[] = [];
  #tenants = new Map<string, Tenant>();
  #anonymous: Principal | undefined;

  constructor(keyTenants: ReadonlyMap<string, string>, limits: TenantLimits, logger: RelayLogger) {
    const tenantOf = (name: string): Tenant => {
      let tenant = this.#tenants.get(name);
      if (!tenant) {
        tenant = new Tenant(name, limits, logger);
        this.#tenants.set(name, tenant);
      }
      return tenant;
    };
    let index = 0;
    for (const [key, name] of keyTenants) {
      this.#keys.push({ digest: digest(key), principal: { tenant: tenantOf(name), keyId: `k${++index}` } });
    }
    if (this.#keys.length === 0) this.#anonymous = { tenant: tenantOf(DEFAULT_TENANT), keyId: "anonymous" };
  }

  /** `false` when no keys are configured (then every request is the `default` tenant). */
  get requiresKeys(): boolean {
    return this.#anonymous === undefined;
  }

  /** The principal of a relay without keys. */
  get anonymous(): Principal | undefined {
    return this.#anonymous;
  }

  /** The principal `presented` belongs to. Compares against every key, in constant time each. */
  match(presented: string): Principal | undefined {
    const candidate = digest(presented);
    let found: Principal | undefined;
    for (const known of this.#keys) {
      if (timingSafeEqual(candidate, known.digest)) found = known.principal;
    }
    return found;
  }

  tenant(name: string): Tenant | undefined {
    return this.#tenants.get(name);
  }

  tenants(): Tenant[] {
    return [...this.#tenants.values()];
  }
}
