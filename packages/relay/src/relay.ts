/**
 * A running relay as its operator sees it (`startRelay` resolves with one): its addresses, what
 * it holds, and the operator's levers (closing a listener, dropping SDK sockets, stopping).
 */
import type { EventEmitter } from "eventemitter3";
import type { ConnectionStats } from "./connection-guard.js";
import type { RelayEnvironmentInfo, RelayEvents, RelaySandboxInfo } from "./relay-events.js";
import type { TenantUsage } from "./tenant.js";

/** Options of {@link Relay.dropSdkSockets}. */
export interface DropSdkSocketsOptions {
  /** Close code. Default 1012 ("service restart"). */
  code?: number | undefined;
  /** Close reason. Default "Relay dropped the status socket". */
  reason?: string | undefined;
  /** Cut the TCP connection without a close frame (like a network failure). Default false. */
  terminate?: boolean | undefined;
}

/** What the relay holds right now (`relay.stats()`, and the `/_relay/stats` hook for one tenant). */
export interface RelayStats {
  connections: ConnectionStats;
  tenants: TenantUsage[];
}

/** A running relay. */
export interface Relay extends EventEmitter<RelayEvents> {
  /** WebSocket base, `ws://127.0.0.1:PORT`. */
  readonly url: string;
  /** HTTP base, `http://127.0.0.1:PORT`: the listener's `LETTA_BASE_URL` and the SDK's API base URL. */
  readonly httpUrl: string;
  readonly port: number;
  readonly host: string;
  /** Every registered environment, of every tenant (the operator's view). */
  environments(): RelayEnvironmentInfo[];
  /** One environment by connection id. */
  environment(connectionId: string): RelayEnvironmentInfo | undefined;
  /** Every live sandbox, of every tenant (empty when the relay provisions none). */
  sandboxes(): RelaySandboxInfo[];
  /** Connections and, per tenant, what it holds against its caps. */
  stats(): RelayStats;
  /** The SDK status socket URL for an environment (no credentials in it). */
  statusUrl(
    connectionId: string,
    query: {
      channel: "control" | "stream";
      agentId?: string | undefined;
      conversationId?: string | undefined;
      sessionId?: string | undefined;
    },
  ): string;
  /**
   * Closes the environment's listener sockets with `code` (default 1012: the listener reconnects).
   * 1008 removes the environment (its SDK sockets are closed with 1008; the listener registers
   * again and gets a new connection id). Returns false if there was nothing to close.
   */
  closeListener(connectionId: string, code?: number, reason?: string): boolean;
  /** Closes the SDK status sockets of one environment (or all); sessions wait for a reconnect. Returns how many. */
  dropSdkSockets(connectionId?: string, options?: DropSdkSocketsOptions): number;
  /** Stops the relay: every sandbox reaped, listener and SDK sockets closed with 1001, server closed. Idempotent. */
  close(): Promise<void>;
}
