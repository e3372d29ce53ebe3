import type { LocalBackendOptions } from "../backends/local-backend.js";
import type { CloudBackendOptions } from "../backends/cloud-backend.js";
import type { CallLimits } from "../calls/index.js";
import type { CallJournal } from "../calls/index.js";
import type { Timers } from "../internal/timers.js";
import type { Logger } from "../observability/logger.js";
import type { TelemetryTracer } from "../observability/telemetry.js";
import type { ClientTool, ToolSource } from "../tools/index.js";
import type { RuntimeLink } from "../transport/runtime-link.js";
import type { ApprovalDecision, ApprovalRequest } from "./approval-responder.js";
import type { SessionListeners } from "./session-events.js";

/** The runtime's permission modes. */
export type PermissionMode = "standard" | "acceptEdits" | "unrestricted" | "strict";

/** Where the runtime is: the local app-server, or a Letta Cloud environment. */
export type BackendOptions = LocalBackendOptions | CloudBackendOptions;

/**
 * Not public: a link built by the caller, for this repository's own tests and benchmarks (no
 * socket, a fault-injecting link, a second controller on the same connection). Only
 * `createSessionOnLink` (packages/toolrelay/src/session/create-session.ts) takes it; see CONTRIBUTING.md.
 */
export interface LinkBackendOptions {
  kind: "link";
  link: RuntimeLink;
}

/** `SessionOptions` whose backend may also be an injected link (`createSessionOnLink`). */
export type LinkSessionOptions = Omit<SessionOptions, "backend"> & { backend: BackendOptions | LinkBackendOptions };

/** Which agent the session drives. */
export type AgentOptions =
  | { /** Attach to an existing agent. */ id: string }
  | {
      /** Create a new agent. `model` is a handle such as `"openai/gpt-5"` or `"llama.cpp/<id>"`. */
      create: { model: string; name?: string | undefined; [field: string]: unknown };
    };

/** `createSession`'s options: where the runtime is, which agent and conversation, your tools, and the bounds of the calls. */
export interface SessionOptions {
  /** Where the runtime is: `{ kind: "local", url }`, `{ kind: "local", spawn: true }` or `{ kind: "cloud", ... }`. Required. */
  backend: BackendOptions;
  /** The agent to drive. Required. */
  agent: AgentOptions;
  /**
   * The conversation: `"new"` creates one, `"default"` is the agent's default
   * conversation, any other string is an existing conversation id. Default `"new"`.
   */
  conversation?: "new" | "default" | (string & {}) | undefined;
  /**
   * Client tools: they run in this process whenever the agent calls them.
   * Tools made with `defineTool`, and tool sources such as `mcpTools(...)`
   * from `toolrelay/mcp` (started with the session, closed with it). Default `[]`.
   */
  tools?: readonly (ClientTool | ToolSource)[] | undefined;
  /**
   * The runtime's permission mode: which calls of its own tools (Bash, Read, Write, Edit, ...) run
   * without the app's say. Default `"strict"`: none — the runtime asks about every one and
   * `canUseTool` answers (without it, each is denied, and the agent has only your client tools).
   * `"standard"`: the calls the runtime classifies as read-only (`echo hi`, Read, Grep, ...) run
   * unasked, the rest are asked. `"acceptEdits"`: as standard, for an editor that shows edits.
   * `"unrestricted"` is the opt-out: the runtime's shell and file tools run unasked on the machine
   * the runtime runs on (docs/approvals.md). The mode never limits client tools: they ask only when
   * they say `needsApproval`.
   */
  mode?: PermissionMode | undefined;
  /**
   * Answers every approval the session gets: a call of a runtime tool that the `mode` does not let
   * run at once (`kind: "runtime-tool"`: in the default `strict` mode, every call of Bash, Read,
   * Write, ...), and a client tool call whose `needsApproval` says so (`kind: "client-tool"`).
   * Return (or resolve) `{ behavior: "allow" }` or `{ behavior: "deny", message }`; the request's
   * `signal` fires when the question is moot. Unanswered after `approvalTimeoutMs`, or throwing,
   * is a deny. Default: none — every such request is denied with a message saying so, and a
   * session with a client tool that needs approval is refused (`INVALID_OPTIONS`).
   */
  canUseTool?: ((request: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>) | undefined;
  /**
   * How long an approval waits for `canUseTool`'s answer, in ms (1_000–299_000); then it is a deny
   * and the model reads that nobody answered. The runtime waits 300 s for a client tool call,
   * approval included. Default 120_000.
   */
  approvalTimeoutMs?: number | undefined;
  /** Deadline of a client tool call that sets no `timeoutMs`, in ms: an integer up to 300_000 (the runtime stops waiting after 300 s). Default 60_000. */
  toolTimeoutMs?: number | undefined;
  /** Largest tool input accepted, in UTF-8 bytes of its JSON; larger ones are refused unread. Default 1_048_576 (1 MiB). */
  maxInputBytes?: number | undefined;
  /** Text results are clamped to this many characters with a truncation note. Default 32_000 (the runtime's own clamp). */
  maxResultChars?: number | undefined;
  /** How long running calls survive a lost link before they are aborted, in ms. Default 30_000. */
  reconnectGraceMs?: number | undefined;
  /** Client tool calls running at once; past it a request is answered "busy" and not run. Default 256. */
  maxConcurrentCalls?: number | undefined;
  /**
   * The other bounds of the call table (cached outcomes, forgotten calls, held answers, identity
   * lengths, the re-send window after a reconnect); each documented with its default on
   * {@link CallLimits}. Default: those defaults.
   */
  callLimits?:
    | Partial<
        Omit<
          CallLimits,
          "toolTimeoutMs" | "approvalTimeoutMs" | "maxInputBytes" | "maxResultChars" | "reconnectGraceMs" | "maxConcurrentCalls"
        >
      >
    | undefined;
  /** Deadline of each request the session sends (runtime_start, abort, ...), in ms. Default 30_000. */
  requestTimeoutMs?: number | undefined;
  /**
   * `"isolated"`: the runtime's working directory is a fresh empty scratch
   * directory, removed on close (local backend only). A string: that directory.
   * Default: not sent (the runtime's own working directory).
   */
  workspace?: "isolated" | { cwd: string } | undefined;
  /**
   * Re-register the full tool set (`runtime_external_tools_update`) before
   * every turn. For a runtime shared by several controllers (one cloud
   * environment, several clients), where another client's `runtime_start`
   * replaces your tools. Costs one round trip per turn. Default `false`.
   */
  reassertToolsEachTurn?: boolean | undefined;
  /**
   * A running turn silent this long (no frame, no client tool running) is
   * probed with a `sync`, so a turn end lost across a reconnect is recovered
   * from the replayed loop status. The probe never writes the turn's input
   * again (the runtime would run it twice). In ms; `0` disables. Default 5_000.
   */
  turnStallProbeMs?: number | undefined;
  /**
   * The least time between a turn's end and the next turn's input, in ms, in every mode but
   * `unrestricted` (a `send` right after a turn's end writes its input this much later). Letta Code
   * 0.32.18 loses a permission request asked in a turn whose input came within ~200 ms of the
   * previous turn's end, and that turn never ends; in those modes the runtime asks about every
   * client tool call (docs/approvals.md). `0` keeps no gap. Default 1_000.
   */
  turnGapMs?: number | undefined;
  /**
   * Where each client tool call is recorded before its callback runs and again when it settles,
   * so a call re-offered after this process restarted (the cloud relay re-offers an unanswered
   * call to the next session of the conversation) is answered from its record and never run
   * twice: a settled call gets its stored response byte for byte; one that started and never
   * settled runs again only if its tool says it is idempotent (`annotations.idempotentHint` or
   * `readOnlyHint`), else the model reads "outcome unknown". `openFileCallJournal` (one process,
   * survives a restart), `openNatsCallJournal` from `toolrelay/nats-journal` (several processes or
   * machines), or a `MemoryCallJournal`. The session does not close it: several sessions may share
   * one. See docs/call-journal.md. Default: none (records live in the session only).
   */
  journal?: CallJournal | undefined;
  /**
   * Listeners attached before the session connects, by event name (the events of `session.on`).
   * They see what happens while `createSession` runs: a call the runtime offers again at once (a
   * relay's re-offer after a restart, answered from the `journal`) settles before `createSession`
   * resolves, so a `tool-call-end` listener added afterwards would miss it. An unknown event name
   * is refused (`INVALID_OPTIONS`). Default: none.
   */
  on?: SessionListeners | undefined;
  /** Aborting this signal closes the session. */
  signal?: AbortSignal | undefined;
  /** Sent to the runtime as `client_info`. Default `{ name: "toolrelay" }`. */
  clientInfo?: { name: string; title?: string | undefined; version?: string | undefined } | undefined;
  /** Timers (inject fake ones in tests). Default: the global timers. */
  timers?: Timers | undefined;
  /**
   * Where the session's log lines go: any logger with pino's shape (`debug`, `info`, `warn`,
   * `error`, each `(fields, message)`), e.g. a pino logger or a child of one. Each line carries
   * `component: "toolrelay:session" | "toolrelay:turn" | "toolrelay:tool" | "toolrelay:link"`,
   * ids, tool names, outcomes and durations; credentials are redacted. Default: the `debug`
   * package — set `DEBUG=toolrelay*` to print them on stderr (see docs/observability.md).
   */
  logger?: Logger | undefined;
  /**
   * Also log the prompt of each turn, the input of each tool call and its result (at debug
   * level; credentials still redacted). They may hold personal or secret data: turn this on only
   * where logs may hold them. Never in spans. Default `false`.
   */
  logPayloads?: boolean | undefined;
  /**
   * OpenTelemetry: a span per turn (`toolrelay.turn`) and per client tool call
   * (`execute_tool <name>`, a child of its turn's) with ids, tool name, outcome and duration — no
   * payloads. Default: the global tracer of `@opentelemetry/api` when that optional peer is
   * installed (a no-op until your application registers a tracer provider), else no spans. A
   * tracer (`trace.getTracer("my-app")`): spans go there. `false`: no spans.
   */
  tracer?: TelemetryTracer | false | undefined;
}
