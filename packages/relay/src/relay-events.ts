/**
 * What a running relay reports: the state of its environments and the events tests and
 * operators can watch. No event carries frame contents or credentials.
 */
import type { RelayRefusal } from "./relay-refusal.js";
import type { Channel } from "./relay-routing.js";

/** One environment as the relay sees it (a superset of a `GET /v1/environments` entry). */
export interface RelayEnvironmentInfo {
  /** Stable per (deviceId, listenerInstanceId), also across a 1008 re-registration. */
  id: string;
  /** The tenant that registered it (and alone may see and use it). */
  tenant: string;
  /** The listener's connection id (`env-<uuid>`); a new one after every 1008. */
  connectionId: string;
  deviceId: string;
  listenerInstanceId: string | undefined;
  connectionName: string;
  /** ISO time of the registration. */
  registeredAt: string;
  /** ISO time the current listener socket (pair) became ready; undefined while disconnected. */
  connectedAt: string | undefined;
  listenerConnected: boolean;
  /** How the listener is connected now (`undefined` while disconnected). */
  listenerMode: "single" | "split" | "paired" | undefined;
  /** SDK sessions attached or waiting for a reconnect. */
  sdkSessions: number;
  /** Request ids of `external_tool_call_request`s not answered yet. */
  outstandingCalls: string[];
  /** Commands held for the listener while it reconnects. */
  queuedCommands: number;
  /** The listener is slow to read: the relay stopped reading the environment's SDK sockets until it catches up. */
  listenerCongested: boolean;
  /** The sandbox whose listener registered this environment (`undefined` for any other listener). */
  sandboxId: string | undefined;
}

/** Why a sandbox was reaped (its process stopped and its directory removed). */
export type SandboxReapReason = "expired" | "terminated" | "exited" | "shutdown";

/** One sandbox as the relay sees it. */
export interface RelaySandboxInfo {
  /** `sandbox-<uuid>`. */
  sandboxId: string;
  /** The tenant that created it (and alone may see, refresh and terminate it). */
  tenant: string;
  /** The device its listener registers as (`LETTA_LISTENER_DEVICE_ID`). */
  deviceId: string;
  /** Its listener's `--env-name`. */
  connectionName: string;
  /** The agent (and conversation) it was created for; `undefined` for an agent-less create. */
  agentId: string | undefined;
  conversationId: string | undefined;
  /** As asked for (recorded; every sandbox here is a process). */
  sandboxClass: string | undefined;
  /** As asked for (recorded, not cloned: the relay has no network beyond loopback). */
  githubRepositories: Array<{ owner: string; repo: string; commit: string }>;
  /** The TTL of the last create or refresh, in TTL minutes (`sandbox.minuteMs` each). */
  ttlMinutes: number;
  /** ISO times. */
  createdAt: string;
  expiresAt: string;
  /** The environment its listener registered, once it did; `undefined` before. */
  connectionId: string | undefined;
  /** Its listener's socket (pair) is ready. */
  online: boolean;
  /** The listener process (the isolation wrapper's, with `"namespace"`). */
  pid: number;
  /** Its directory, and the workspace inside it (the listener's cwd). */
  directory: string;
  workspace: string;
}

/** An SDK session's socket (control or stream) connected or closed. */
export interface SdkSocketEvent {
  connectionId: string;
  /** The relay's id for the SDK session (not its identity key). */
  sessionId: string;
  channel: Channel;
}

/** The relay's events (`relay.on(name, listener)`), with their listener arguments. */
export interface RelayEvents {
  "environment-registered": [info: RelayEnvironmentInfo];
  "environment-removed": [connectionId: string, reason: string];
  "listener-ready": [connectionId: string];
  "listener-down": [connectionId: string, code: number];
  /** `redelivered`: unacknowledged frames sent again on this socket. */
  "sdk-attached": [event: SdkSocketEvent & { redelivered: number }];
  "sdk-detached": [event: SdkSocketEvent];
  /** A listener asked for a tool call; `delivered` is false while no SDK session can take it. */
  "tool-call-requested": [event: { connectionId: string; requestId: string; delivered: boolean }];
  /** An SDK answered an outstanding call; `delivery` says whether the listener got it now or it is queued. */
  "tool-call-answered": [event: { connectionId: string; requestId: string; delivery: "sent" | "queued" }];
  /** The relay answered a call to the listener with an error itself (no owner in time, no runtime, over the cap). */
  "tool-call-failed": [event: { connectionId: string; requestId: string; reason: string }];
  /** The relay refused an attempt (see `RefusalKind`); the reason is the text the client got. */
  refused: [refusal: RelayRefusal];
  /** A sandbox was created (its listener is starting). */
  "sandbox-created": [info: RelaySandboxInfo];
  /** A sandbox's process was stopped and its directory removed; `exit` is how the process ended. */
  "sandbox-reaped": [
    event: { sandboxId: string; tenant: string; reason: SandboxReapReason; exit: { code: number | null; signal: string | null } },
  ];
}

/** How the environment reports events (the relay's emitter, narrowed). */
export type RelayEmit = <K extends keyof RelayEvents>(event: K, ...args: RelayEvents[K]) => void;
