/**
 * `@toolrelay/relay`: a reference status relay that does what Letta Cloud's relay does for
 * external tools — registration and sockets for the Letta Code listener, status sockets with
 * `seq`/ack redelivery for SDK clients, and outstanding tool calls remembered until answered —
 * as a multi-tenant service with a bound on everything a client can make it hold.
 * See docs/relay.md.
 *
 * @module @toolrelay/relay
 */
export { startRelay } from "./relay-server.js";
export type { Relay, DropSdkSocketsOptions, RelayStats } from "./relay.js";
export {
  silentRelayLogger,
  type RelayOptions,
  type ResolvedRelayOptions,
  type RelayLogger,
  type ListenerMode,
} from "./relay-options.js";
export { resolveRelayOptions } from "./resolve-relay-options.js";
export type { RelayClusterOptions, ResolvedClusterOptions } from "./cluster/cluster-options.js";
export type { RelayKey, RelayKeyRole, TenantKeys } from "./relay-keys.js";
/** Whether a host names the loopback interface: the rule of `host` and of accepted `Host` headers (from `toolrelay/protocol`). */
export { isLoopbackHost } from "toolrelay/protocol";
export type { RelayEvents, RelayEnvironmentInfo, RelaySandboxInfo, SandboxReapReason, SdkSocketEvent } from "./relay-events.js";
export type { RelaySandboxOptions, ResolvedSandboxOptions, SandboxIsolation } from "./sandbox-options.js";
export type { RelayRefusal, RefusalKind } from "./relay-refusal.js";
export type { TenantUsage } from "./tenant.js";
export type { ConnectionStats } from "./connection-guard.js";
export { RELAY_CLOSE } from "./relay-close-codes.js";
export type { RegistrationAnswer, RegistrationRequest } from "./listener-registry.js";
export type { Channel as RelayChannel } from "./relay-routing.js";
