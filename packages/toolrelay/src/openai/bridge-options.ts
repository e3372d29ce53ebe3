/**
 * Options of the OpenAI-compatible chat bridge, each with its default. Every bound the bridge
 * enforces is one of these options; resolve-bridge-options.ts checks them. See
 * docs/openai-bridge.md.
 */
import type { Timers } from "../internal/timers.js";
import type { AgentOptions, BackendOptions, SessionOptions } from "../session/session-options.js";

/** Who runs the tools a chat request declares. */
export type ToolExecution = "client" | "runtime";

/** Where a thread's runtime works (its `cwd`). */
export type BridgeWorkspace = "isolated" | { cwd: string } | "runtime";

/** Where an explicit thread key may come from. */
export interface ThreadKeySources {
  /** A request header that names the thread. Default `"x-toolrelay-thread"`; `false` ignores headers. */
  header?: string | false | undefined;
  /** A key of the request's `metadata` that names the thread. Default `"thread_id"`; `false` ignores metadata. */
  metadata?: string | false | undefined;
  /**
   * The request's `user` field names the thread. Default `false`: many clients send the same
   * `user` (the person) for every conversation, which would put them all in one thread.
   */
  user?: boolean | undefined;
}

/** Options passed to every thread's `createSession`, besides the ones the bridge sets itself. */
export type BridgeSessionOptions = Omit<SessionOptions, "backend" | "agent" | "conversation" | "tools" | "workspace" | "signal">;

/** Options of {@link startOpenAiBridge}; every one but `backend` and `agent` has a default. */
export interface OpenAiBridgeOptions {
  /**
   * Where the agent's runtime is: any `createSession` backend, passed through as it is (local
   * `{ url }`, cloud environment, managed sandbox, ...). A local `{ spawn }` backend is started
   * once by the bridge and shared by every thread. Required.
   */
  backend: BackendOptions;
  /**
   * The agent behind the bridge. `{ id }`: every thread is a conversation of that agent.
   * `{ create }`: one agent is created per API key (on its first request) and its threads are
   * conversations of it. Required.
   */
  agent: AgentOptions;
  /**
   * Who runs the tools a request declares. `"client"` (default): the request's `tools` become the
   * session's client tools and the agent's calls to them are returned to the client as
   * `tool_calls`; the runtime works in an empty scratch directory (see `workspace`). `"runtime"`:
   * the request's `tools` are ignored and the agent works with its own tools in `workspace`; it
   * needs `session.mode` or `session.canUseTool` (the default mode denies those tools).
   */
  toolExecution?: ToolExecution | undefined;
  /**
   * The runtime's working directory. `"isolated"`: a fresh, empty scratch directory per thread,
   * removed when the thread ends (local backends only). `{ cwd }`: that directory. `"runtime"`:
   * the runtime's own (nothing sent). Default: `"isolated"` on a local backend with
   * `toolExecution: "client"`, `"runtime"` with `toolExecution: "runtime"`; on any other backend
   * with `toolExecution: "client"` it must be given (the bridge cannot make an empty directory on
   * the runtime's machine, and will not guess that the runtime's own one is empty).
   */
  workspace?: BridgeWorkspace | undefined;
  /** Port to listen on. Default `0` (any free port; read it from `bridge.port`). */
  port?: number | undefined;
  /** Address to bind. Default `"127.0.0.1"`. A non-loopback address needs `apiKeys`. */
  host?: string | undefined;
  /**
   * Bearer keys accepted (`Authorization: Bearer <key>`, compared in constant time). Each key's
   * threads are its own: a request never continues a thread another key started. Default `[]`:
   * no authentication, allowed on a loopback bind only.
   */
  apiKeys?: readonly string[] | undefined;
  /** `Host` header names accepted besides loopback names and the bind address. Default `[]`. */
  allowedHosts?: readonly string[] | undefined;
  /**
   * Browser origins allowed to call the bridge (CORS). Default `[]`: a request with an `Origin`
   * header is refused (403), so a web page cannot reach a bridge on loopback.
   */
  allowedOrigins?: readonly string[] | undefined;
  /** The model id of `GET /v1/models`; a request must name it. Default `"letta-code"`. */
  modelId?: string | undefined;
  /** Largest request body, in bytes (larger: 413). Default 4 MiB. */
  maxBodyBytes?: number | undefined;
  /**
   * Threads open at once (each a session and a conversation). A new thread past it replaces the
   * least recently used idle thread; when none is idle it is refused with 429. Default 64.
   */
  maxThreads?: number | undefined;
  /** How long a thread with no request and no pending tool call is kept, in ms. Default 1,800,000 (30 min). */
  threadIdleMs?: number | undefined;
  /**
   * How long a tool call returned to the client waits for its result (the next request's `role:
   * "tool"` message), in ms: 1–300,000. Then the runtime is answered that the call timed out and
   * the turn is stopped, so that the next request starts cleanly. Default 240,000 (below the
   * runtime's own 300 s).
   */
  toolResultTimeoutMs?: number | undefined;
  /**
   * The instruction added to a new user message when the client declared tools, pushing the
   * model to call them. It is never added to a request that delivers tool results. A function
   * gets the tool names. `false`: none. Default: a short note naming the tools (see
   * docs/openai-bridge.md).
   */
  toolNudge?: string | false | ((toolNames: readonly string[]) => string) | undefined;
  /**
   * Characters of earlier messages passed to a new conversation when a request continues one the
   * bridge does not know (the newest are kept). Default 32,000.
   */
  maxHistoryChars?: number | undefined;
  /** Where an explicit thread key is read from. Default `{ header: "x-toolrelay-thread", metadata: "thread_id", user: false }`. */
  threadKeys?: ThreadKeySources | undefined;
  /** Sent as an SSE comment while a streamed answer is silent this long, in ms; `0` disables. Default 15,000. */
  keepAliveMs?: number | undefined;
  /**
   * Everything else each thread's `createSession` gets (mode, canUseTool, timeouts, ...). Default
   * `{}`: the session's default mode, `"strict"`, where the runtime asks before every call and,
   * with no `canUseTool`, each call of the runtime's own tools (Bash, Read, Write, ...) is denied
   * while the client's tools run. `toolExecution: "runtime"` needs `mode` or `canUseTool` here
   * (refused otherwise: the agent could run none of its tools).
   */
  session?: BridgeSessionOptions | undefined;
  /** Called with errors the bridge handled but a caller may want to see (a session's `error` events, ...). Default: none. */
  onError?: ((error: Error, context: { threadId?: string | undefined }) => void) | undefined;
  /** Timers (inject fake ones in tests). Default: the global timers. */
  timers?: Timers | undefined;
}
