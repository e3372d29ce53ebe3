import type { ManagedSandboxInfo } from "../backends/managed-sandbox.js";
import type { CallLimits } from "../calls/index.js";
import type { Timers } from "../internal/timers.js";
import type { SessionObserver } from "../observability/session-observer.js";
import type { RuntimeLink } from "../transport/runtime-link.js";
import type { RuntimeScope } from "../wire/index.js";
import type { EventLoopHold } from "./event-loop-hold.js";
import type { RuntimeStartInput } from "./runtime-start-frame.js";
import type { SessionTools } from "./session-tools.js";
import type { SessionOptions } from "./session-options.js";

/** A user message: plain text, or letta message content parts. */
export type MessageInput = string | Array<{ type: "text"; text: string } | { type: "image"; source: Record<string, unknown> }>;

/** Options of `session.send`. */
export interface SendOptions {
  /** Aborting it aborts the turn. */
  signal?: AbortSignal | undefined;
}

/** What createSession hands to the session (not exported by any entry point). */
export interface SessionParts {
  link: RuntimeLink;
  /** The tool set (plain tools and open tool sources); its registry is the current one. */
  tools: SessionTools;
  timers: Timers;
  /** The options (the backend is already resolved into `link`). */
  options: Omit<SessionOptions, "backend">;
  startInput: Omit<RuntimeStartInput, "runtime" | "tools">;
  requestTimeoutMs: number;
  /** The call table's bounds, resolved from the options once. */
  callLimits: Partial<CallLimits>;
  /** The runtime the caller named (agent id and an existing conversation), answered for while it starts. */
  expectedRuntime: RuntimeScope | undefined;
  /** Releases what the backend and workspace set up (spawned server, scratch dir). */
  dispose(): Promise<void>;
  /** The session's log and tracer (packages/toolrelay/src/observability). */
  observer: SessionObserver;
  /** Called after every (re)registration, e.g. to point the cloud link at the runtime. */
  onRuntime?(runtime: RuntimeScope): void;
  /** A cloud backend's managed sandbox: refreshed before each turn; a gone one fails the turn (SANDBOX_EXPIRED). */
  sandbox?: { readonly info: ManagedSandboxInfo; beforeTurn(): Promise<void> } | undefined;
  /** Whether the session keeps the process alive; the session holds it while something is in flight. Default: always held. */
  hold?: EventLoopHold | undefined;
}
