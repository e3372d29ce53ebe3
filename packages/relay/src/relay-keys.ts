/**
 * The relay's keys and what each may do (docs/relay.md "Key roles"). A key leads to one tenant
 * and has one or both roles: a `listener` key may register environments and open listener
 * sockets; an `sdk` key may list environments, open SDK status sockets and manage sandboxes.
 * A tenant's keys given as a bare list have both roles each (the meaning they had before roles
 * existed); `{ listener: [...], sdk: [...] }` gives each key its own.
 */
import { ToolrelayError } from "toolrelay/protocol";

/** What a key may do: act as a listener, or as an SDK client. */
export type RelayKeyRole = "listener" | "sdk";

/** Every role, in the order they are listed. */
export const RELAY_KEY_ROLES: readonly RelayKeyRole[] = ["listener", "sdk"];

/**
 * A tenant's keys by role. A key listed under both has both roles. At least one key in all.
 * `listener` keys are the tenant's listener credentials (any of them may act as any of the
 * tenant's listeners); `sdk` keys can never open a listener socket or register an environment.
 */
export interface TenantKeys {
  /** Keys that may register environments and open listener sockets. Default `[]`. */
  listener?: readonly string[] | undefined;
  /** Keys that may list environments, open SDK status sockets and create sandboxes. Default `[]`. */
  sdk?: readonly string[] | undefined;
}

/** One configured key: its tenant and its roles. */
export interface RelayKey {
  /** The tenant the key leads to. */
  tenant: string;
  /** What the key may do (`listener` before `sdk`); never empty. */
  roles: readonly RelayKeyRole[];
}

const TENANT_NAME = /^[A-Za-z0-9._-]{1,64}$/;

function invalid(message: string): ToolrelayError {
  return new ToolrelayError("INVALID_OPTIONS", `relay: ${message}`);
}

function checkKey(key: unknown): string {
  if (typeof key !== "string" || key.length === 0 || /\s/.test(key)) {
    throw invalid("every API key must be a non-empty string without whitespace");
  }
  return key;
}

/** A tenant's entry of `tenants` as keys by role (a bare list: every key has both roles). */
function keysByRole(tenant: string, entry: unknown): Record<RelayKeyRole, readonly unknown[]> {
  if (Array.isArray(entry)) return { listener: entry, sdk: entry };
  if (typeof entry !== "object" || entry === null) {
    throw invalid(`tenant ${tenant} must be a list of API keys or { listener: [...], sdk: [...] }`);
  }
  const record = entry as Record<string, unknown>;
  const unknownField = Object.keys(record).find((field) => !(RELAY_KEY_ROLES as readonly string[]).includes(field));
  if (unknownField !== undefined) {
    throw invalid(`tenant ${tenant} has an unknown key role ${JSON.stringify(unknownField.slice(0, 40))} (roles: listener, sdk)`);
  }
  const listOf = (role: RelayKeyRole): readonly unknown[] => {
    const value = record[role];
    if (value === undefined) return [];
    if (!Array.isArray(value)) throw invalid(`tenant ${tenant}: ${role} must be a list of API keys`);
    return value;
  };
  return { listener: listOf("listener"), sdk: listOf("sdk") };
}

/**
 * Key → its tenant and roles, from `apiKeys` and `tenants`. Keys of `apiKeys` that `tenants`
 * does not name are tenants of their own (`key-<position>`), with both roles. Throws
 * `INVALID_OPTIONS` for a bad tenant name, an empty tenant, a malformed key, an unknown role,
 * or a key listed for two tenants (never naming the key).
 */
export function buildRelayKeys(options: {
  apiKeys?: readonly string[] | undefined;
  tenants?: Readonly<Record<string, readonly string[] | TenantKeys>> | undefined;
}): Map<string, RelayKey> {
  const keys = new Map<string, { tenant: string; roles: Set<RelayKeyRole> }>();
  for (const [tenant, entry] of Object.entries(options.tenants ?? {})) {
    if (!TENANT_NAME.test(tenant))
      throw invalid(`tenant name ${JSON.stringify(tenant.slice(0, 80))} must be 1-64 characters of A-Z a-z 0-9 . _ -`);
    const byRole = keysByRole(tenant, entry);
    if (byRole.listener.length + byRole.sdk.length === 0) throw invalid(`tenant ${tenant} needs at least one API key`);
    for (const role of RELAY_KEY_ROLES) {
      for (const key of byRole[role]) {
        const checked = checkKey(key);
        const known = keys.get(checked);
        if (known !== undefined && known.tenant !== tenant)
          throw invalid(`an API key is listed for two tenants (${known.tenant} and ${tenant})`);
        if (known) known.roles.add(role);
        else keys.set(checked, { tenant, roles: new Set([role]) });
      }
    }
  }
  const named = new Set([...keys.values()].map((key) => key.tenant));
  (options.apiKeys ?? []).forEach((key, index) => {
    const checked = checkKey(key);
    if (keys.has(checked)) return;
    const tenant = `key-${index + 1}`;
    if (named.has(tenant)) throw invalid(`tenant name ${tenant} is reserved for the key at position ${index + 1} of apiKeys`);
    keys.set(checked, { tenant, roles: new Set(RELAY_KEY_ROLES) });
  });
  return new Map([...keys].map(([key, { tenant, roles }]) => [key, { tenant, roles: RELAY_KEY_ROLES.filter((role) => roles.has(role)) }]));
}

/**
 * Tenants where a key of both roles sits beside other keys: any of those keys can act as the
 * tenant's listener, so a key given to an SDK client can pose as it. The relay warns about each
 * at start (a tenant of one key is one party, and is not named).
 */
export function tenantsWithSharedRoles(keys: ReadonlyMap<string, RelayKey>): string[] {
  const byTenant = new Map<string, { keys: number; bothRoles: number }>();
  for (const { tenant, roles } of keys.values()) {
    const entry = byTenant.get(tenant) ?? { keys: 0, bothRoles: 0 };
    entry.keys++;
    if (roles.length === RELAY_KEY_ROLES.length) entry.bothRoles++;
    byTenant.set(tenant, entry);
  }
  return [...byTenant].filter(([, entry]) => entry.keys > 1 && entry.bothRoles > 0).map(([tenant]) => tenant);
}

/** The text of a 403 for a key without `role`: what the role allows; never the key. */
export function missingRoleMessage(role: RelayKeyRole): string {
  return role === "listener"
    ? "this API key has no listener role: only a listener key may register environments or open listener sockets"
    : "this API key has no sdk role: only an SDK key may list environments, open SDK status sockets or manage sandboxes";
}
