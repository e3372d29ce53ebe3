/**
 * Turns user options into a complete, validated set: every default in one place, every bound
 * an integer in range, and the key → tenant map built from `apiKeys` and `tenants`.
 */
import { ToolrelayError } from "toolrelay/protocol";
import { systemTimers } from "toolrelay/protocol";
import { isLoopbackHost } from "toolrelay/protocol";
import { silentRelayLogger, type RelayOptions, type ResolvedRelayOptions } from "./relay-options.js";
import { resolveSandboxOptions } from "./sandbox-options.js";

const MIB = 1024 * 1024;
const TENANT_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/** The tenant of a relay without keys (loopback only). */
export const DEFAULT_TENANT = "default";

function invalid(message: string): ToolrelayError {
  return new ToolrelayError("INVALID_OPTIONS", `relay: ${message}`);
}

function count(name: string, value: number | undefined, fallback: number, minimum: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < minimum) throw invalid(`${name} must be an integer >= ${minimum}`);
  return value;
}

function checkKey(key: unknown): string {
  if (typeof key !== "string" || key.length === 0 || /\s/.test(key)) {
    throw invalid("every API key must be a non-empty string without whitespace");
  }
  return key;
}

/** Key → tenant name. Keys of `apiKeys` that `tenants` does not name are tenants `key-<position>`. */
export function buildKeyTenants(options: Pick<RelayOptions, "apiKeys" | "tenants">): Map<string, string> {
  const keyTenants = new Map<string, string>();
  for (const [tenant, keys] of Object.entries(options.tenants ?? {})) {
    if (!TENANT_NAME.test(tenant))
      throw invalid(`tenant name ${JSON.stringify(tenant.slice(0, 80))} must be 1-64 characters of A-Z a-z 0-9 . _ -`);
    if (!Array.isArray(keys) || keys.length === 0) throw invalid(`tenant ${tenant} needs at least one API key`);
    for (const key of keys) {
      const checked = checkKey(key);
      const owner = keyTenants.get(checked);
      if (owner !== undefined && owner !== tenant) throw invalid(`an API key is listed for two tenants (${owner} and ${tenant})`);
      keyTenants.set(checked, tenant);
    }
  }
  const named = new Set(keyTenants.values());
  (options.apiKeys ?? []).forEach((key, index) => {
    const checked = checkKey(key);
    if (keyTenants.has(checked)) return;
    const tenant = `key-${index + 1}`;
    if (named.has(tenant)) throw invalid(`tenant name ${tenant} is reserved for the key at position ${index + 1} of apiKeys`);
    keyTenants.set(checked, tenant);
  });
  return keyTenants;
}

/** Apply the defaults of {@link RelayOptions}; throws `INVALID_OPTIONS` naming the first wrong option. */
export function resolveRelayOptions(options: RelayOptions = {}): ResolvedRelayOptions {
  const host = options.host ?? "127.0.0.1";
  const keyTenants = buildKeyTenants(options);
  if (!isLoopbackHost(host) && keyTenants.size === 0) {
    throw invalid(`refusing to bind non-loopback host ${host} without apiKeys`);
  }
  const listenerMode = options.listenerMode ?? "paired";
  if (!["single", "split", "paired"].includes(listenerMode)) {
    throw invalid(`listenerMode must be "single", "split" or "paired"`);
  }
  const port = count("port", options.port, 0, 0);
  if (port > 65_535) throw invalid("port must be <= 65535");
  return {
    port,
    host,
    keyTenants,
    allowQueryToken: options.allowQueryToken ?? false,
    listenerMode,
    allowedHosts: options.allowedHosts?.map((name) => name.toLowerCase()),
    maxSdkFrameBytes: count("maxSdkFrameBytes", options.maxSdkFrameBytes, 16 * MIB, 1024),
    maxListenerFrameBytes: count("maxListenerFrameBytes", options.maxListenerFrameBytes, 16 * MIB, 1024),
    maxBodyBytes: count("maxBodyBytes", options.maxBodyBytes, 64 * 1024, 256),
    maxUnackedBytes: count("maxUnackedBytes", options.maxUnackedBytes, 8 * MIB, 1024),
    maxUnackedBytesPerTenant: count("maxUnackedBytesPerTenant", options.maxUnackedBytesPerTenant, 64 * MIB, 1024),
    sdkResumeWindowMs: count("sdkResumeWindowMs", options.sdkResumeWindowMs, 60_000, 0),
    environmentGraceMs: count("environmentGraceMs", options.environmentGraceMs, 300_000, 0),
    maxEnvironmentsPerTenant: count("maxEnvironmentsPerTenant", options.maxEnvironmentsPerTenant, 64, 1),
    maxSessionsPerTenant: count("maxSessionsPerTenant", options.maxSessionsPerTenant, 256, 1),
    maxOutstandingCallsPerTenant: count("maxOutstandingCallsPerTenant", options.maxOutstandingCallsPerTenant, 1_000, 1),
    unownedCallTimeoutMs: count("unownedCallTimeoutMs", options.unownedCallTimeoutMs, 30_000, 0),
    outstandingCallTtlMs: count("outstandingCallTtlMs", options.outstandingCallTtlMs, 900_000, 1),
    maxQueuedCommands: count("maxQueuedCommands", options.maxQueuedCommands, 1_000, 1),
    maxQueuedCommandBytes: count("maxQueuedCommandBytes", options.maxQueuedCommandBytes, 16 * MIB, 1024),
    maxListenerBufferedBytes: count("maxListenerBufferedBytes", options.maxListenerBufferedBytes, 16 * MIB, 1024),
    handshakeTimeoutMs: count("handshakeTimeoutMs", options.handshakeTimeoutMs, 5_000, 1),
    maxConnections: count("maxConnections", options.maxConnections, 4_096, 2),
    maxConnectionsPerAddress: count("maxConnectionsPerAddress", options.maxConnectionsPerAddress, 256, 1),
    heartbeatIntervalMs: count("heartbeatIntervalMs", options.heartbeatIntervalMs, 30_000, 0),
    respondToJsonPings: options.respondToJsonPings ?? true,
    enableTestHooks: options.enableTestHooks ?? false,
    sandbox: options.sandbox === undefined ? undefined : resolveSandboxOptions(options.sandbox),
    maxSandboxesPerTenant: count("maxSandboxesPerTenant", options.maxSandboxesPerTenant, 8, 1),
    logger: options.logger ?? silentRelayLogger,
    timers: options.timers ?? systemTimers,
  };
}
