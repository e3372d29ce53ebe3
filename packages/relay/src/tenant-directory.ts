/**
 * The relay's tenants and the keys that lead to them. A presented key is matched against every
 * configured key in constant time (SHA-256 digests, `timingSafeEqual`, no early exit); a match
 * yields a {@link Principal}: the tenant, an opaque id of the key (sessions are bound to it) and
 * the key's roles (relay-keys.ts).
 * Nothing here logs or returns a key.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { RELAY_KEY_ROLES, type RelayKey, type RelayKeyRole } from "./relay-keys.js";
import type { RelayLogger } from "./relay-options.js";
import { DEFAULT_TENANT } from "./resolve-relay-options.js";
import { Tenant, type TenantLimits } from "./tenant.js";

/** Who sent a request: a tenant, through one of its keys. */
export interface Principal {
  readonly tenant: Tenant;
  /** `k1`, `k2`, … by key; `anonymous` when the relay has no keys; `sandbox:<id>` for a sandbox's key. Never the key. */
  readonly keyId: string;
  /** What the key may do: `listener`, `sdk`, or both (a relay without keys: both; a sandbox's key: `listener`). */
  readonly roles: readonly RelayKeyRole[];
  /** Set for the key the relay minted for one sandbox's listener: it may only register that device and connect it. */
  readonly sandbox?: { readonly sandboxId: string; readonly deviceId: string } | undefined;
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
  /** Keys minted for sandbox listeners, by the hex SHA-256 of the key. */
  #sandboxKeys = new Map<string, Principal>();

  constructor(keys: ReadonlyMap<string, RelayKey>, limits: TenantLimits, logger: RelayLogger) {
    const tenantOf = (name: string): Tenant => {
      let tenant = this.#tenants.get(name);
      if (!tenant) {
        tenant = new Tenant(name, limits, logger);
        this.#tenants.set(name, tenant);
      }
      return tenant;
    };
    let index = 0;
    for (const [key, { tenant, roles }] of keys) {
      this.#keys.push({ digest: digest(key), principal: { tenant: tenantOf(tenant), keyId: `k${++index}`, roles: [...roles] } });
    }
    if (this.#keys.length === 0) this.#anonymous = { tenant: tenantOf(DEFAULT_TENANT), keyId: "anonymous", roles: RELAY_KEY_ROLES };
  }

  /** `false` when no keys are configured (then every request is the `default` tenant). */
  get requiresKeys(): boolean {
    return this.#anonymous === undefined;
  }

  /** The principal of a relay without keys. */
  get anonymous(): Principal | undefined {
    return this.#anonymous;
  }

  /**
   * The principal `presented` belongs to. Compares against every configured key, in constant
   * time each; a sandbox key is found by its digest (a lookup by SHA-256 tells nothing about the key).
   */
  match(presented: string): Principal | undefined {
    const candidate = digest(presented);
    let found: Principal | undefined;
    for (const known of this.#keys) {
      if (timingSafeEqual(candidate, known.digest)) found = known.principal;
    }
    return found ?? this.#sandboxKeys.get(candidate.toString("hex"));
  }

  /** A new key for one sandbox's listener, of `tenant`. Revoke it with {@link removeSandboxKey}. */
  addSandboxKey(tenant: Tenant, sandbox: { sandboxId: string; deviceId: string }): string {
    const key = `sbx_${randomBytes(24).toString("base64url")}`;
    this.#sandboxKeys.set(digest(key).toString("hex"), {
      tenant,
      keyId: `sandbox:${sandbox.sandboxId}`,
      roles: ["listener"],
      sandbox: { ...sandbox },
    });
    return key;
  }

  removeSandboxKey(key: string): void {
    this.#sandboxKeys.delete(digest(key).toString("hex"));
  }

  tenant(name: string): Tenant | undefined {
    return this.#tenants.get(name);
  }

  tenants(): Tenant[] {
    return [...this.#tenants.values()];
  }
}
