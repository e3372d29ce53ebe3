/**
 * Turns user options into a complete, validated set: every default in one place, every bound
 * an integer in range, and the keys (tenant and roles of each) built from `apiKeys` and `tenants`
 * (relay-keys.ts).
 */
import { ToolrelayError } from "toolrelay/protocol";
import { systemTimers } from "toolrelay/protocol";
import { isLoopbackHost } from "toolrelay/protocol";
import { resolveClusterOptions } from "./cluster/cluster-options.js";
import { buildRelayKeys } from "./relay-keys.js";
import { silentRelayLogger, type RelayOptions, type ResolvedRelayOptions } from "./relay-options.js";
import { resolveSandboxOptions } from "./sandbox-options.js";

const MIB = 1024 * 1024;

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

/** Apply the defaults of {@link RelayOptions}; throws `INVALID_OPTIONS` naming the first wrong option. */
export function resolveRelayOptions(options: RelayOptions = {}): ResolvedRelayOptions {
  const host = options.host ?? "127.0.0.1";
  const keys = buildRelayKeys(options);
  if (!isLoopbackHost(host) && keys.size === 0) {
    throw invalid(`refusing to bind non-loopback host ${host} without apiKeys`);
  }
  const listenerMode = options.listenerMode ?? "paired";
  if (!["single", "split", "paired"].includes(listenerMode)) {
    throw invalid(`listenerMode must be "single", "split" or "paired"`);
  }
  const port = count("port", options.port, 0, 0);
  if (port > 65_535) throw invalid("port must be <= 65535");
  if (options.cluster !== undefined && options.sandbox !== undefined) {
    throw invalid("cluster and sandbox cannot be combined yet: sandboxes are per process (docs/relay-cluster.md)");
  }
  return {
    port,
    host,
    keys,
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
    cluster: options.cluster === undefined ? undefined : resolveClusterOptions(options.cluster),
    logger: options.logger ?? silentRelayLogger,
    timers: options.timers ?? systemTimers,
  };
}
