import { createLocalBackend } from "../backends/local-backend.js";
import { createCloudBackend } from "../backends/cloud-backend.js";
import type { ManagedSandbox } from "../backends/managed-sandbox.js";
import { DEFAULT_CALL_LIMITS } from "../calls/index.js";
import { ToolrelayError } from "../errors.js";
import { DEFAULT_PERMISSION_MODE } from "../internal/permission-modes.js";
import { systemTimers } from "../internal/timers.js";
import { SessionLog } from "../observability/logger.js";
import { SessionObserver } from "../observability/session-observer.js";
import { SessionTracing } from "../observability/telemetry.js";
import { secretForms } from "../transport/open-web-socket.js";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../transport/request-tracker.js";
import type { RuntimeLink } from "../transport/runtime-link.js";
import type { RuntimeScope } from "../wire/index.js";
import WebSocket from "ws";
import { EventLoopHold } from "./event-loop-hold.js";
import { createIsolatedWorkspace, type IsolatedWorkspace } from "./isolated-workspace.js";
import { Session } from "./session.js";
import { SESSION_EVENT_NAMES, type SessionEvents, type SessionListeners, type SessionToolList } from "./session-events.js";
import { SessionTools } from "./session-tools.js";
import type { LinkSessionOptions, SessionOptions } from "./session-options.js";
import type { RuntimeScope as Scope } from "../wire/index.js";
import { validateSessionOptions } from "./validate-session-options.js";

/**
 * Start a session: connect to the runtime, register the agent, conversation
 * and every client tool, and resolve once the runtime confirmed the
 * registration (`runtime_start_response`). From then on, every client tool
 * call the runtime sends runs in this process.
 *
 * @throws ToolrelayError `INVALID_OPTIONS`, `CONNECT_FAILED`, `UNAUTHORIZED`,
 *   `REQUEST_TIMEOUT`, `REQUEST_FAILED`, `SPAWN_FAILED`, `NOT_FOUND`, `REST_FAILED`, `ABORTED`,
 *   and for a managed sandbox `SANDBOX_NOT_READY` / `SANDBOX_EXPIRED`.
 */
export async function createSession<TTools extends SessionToolList = SessionToolList>(
  options: Omit<SessionOptions, "tools" | "on"> & { tools?: TTools | undefined; on?: SessionListeners<TTools> | undefined },
): Promise<Session<TTools>> {
  validateSessionOptions(options);
  return (await openSession(options)) as unknown as Session<TTools>;
}

/**
 * Not public (not exported by any entry point): `createSession` over a link the caller built,
 * `backend: { kind: "link", link }`, for this repository's tests and benchmarks. See
 * CONTRIBUTING.md, "Injecting a link".
 */
export async function createSessionOnLink(options: LinkSessionOptions): Promise<Session> {
  validateSessionOptions(options, true);
  return openSession(options);
}

async function openSession(options: LinkSessionOptions): Promise<Session> {
  // Everything the session opens holds the event loop only while something is in flight.
  const hold = new EventLoopHold();
  const timers = hold.wrap(options.timers ?? systemTimers);
  const log = new SessionLog(options.logger, secretsOf(options));
  log.write("debug", "session", "session start", { backend: options.backend.kind });
  // The deadline advertised to the runtime is the one the call table enforces: one default.
  const toolTimeoutMs = options.toolTimeoutMs ?? DEFAULT_CALL_LIMITS.toolTimeoutMs;
  const tools = new SessionTools(options.tools ?? [], toolTimeoutMs);
  const cleanups: Array<() => Promise<void>> = [];
  const dispose = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  try {
    // HOOK (tool sources): MCP servers start before anything else and are closed with the session.
    cleanups.push(() => tools.close());
    await tools.open(options.signal ?? new AbortController().signal);
    let workspace: IsolatedWorkspace | undefined;
    let cwd: string | undefined;
    if (options.workspace === "isolated") {
      workspace = await createIsolatedWorkspace();
      cleanups.push(() => workspace!.remove());
      cwd = workspace.path;
    } else if (options.workspace) cwd = options.workspace.cwd;

    let link: RuntimeLink;
    let onRuntime: ((runtime: RuntimeScope) => void) | undefined;
    let sandbox: ManagedSandbox | undefined;
    let emitError: (error: ToolrelayError) => void = () => undefined;
    const backend = options.backend;
    if (backend.kind === "local") {
      const local = await createLocalBackend({ ...backend, WebSocket: hold.webSocket(backend.WebSocket ?? WebSocket) }, timers);
      cleanups.push(() => local.dispose());
      if (local.server) hold.adopt(local.server.process);
      link = local.link;
    } else if (backend.kind === "cloud") {
      const runtimeHint = {
        agentId: "id" in options.agent ? options.agent.id : undefined,
        conversationId: options.conversation === "new" ? undefined : options.conversation,
      };
      // HOOK (managed sandbox): `backend.sandbox` is created (or resumed) and online before the link opens.
      const cloud = await createCloudBackend(
        {
          ...backend,
          timers: backend.timers === undefined ? timers : hold.wrap(backend.timers),
          WebSocket: hold.webSocket(backend.WebSocket ?? WebSocket),
        },
        runtimeHint,
        {
          signal: options.signal,
          onError: (error) => emitError(error),
        },
      );
      link = cloud.link;
      sandbox = cloud.sandbox;
      if (sandbox) cleanups.push(() => sandbox!.close());
      onRuntime = (runtime) => {
        cloud.link.setRuntime({ agentId: runtime.agent_id, conversationId: runtime.conversation_id });
        sandbox?.setRuntime(runtime.agent_id ?? undefined, runtime.conversation_id);
      };
    } else {
      link = backend.link;
    }

    let session: Session | undefined;
    const observer = new SessionObserver({
      log,
      tracing: await SessionTracing.create(options.tracer),
      timers,
      logPayloads: options.logPayloads === true,
      scope: () => ({ agentId: session?.agentId ?? "", conversationId: session?.conversationId ?? "", connectionId: link.connectionId }),
    });
    session = Session.create({
      link,
      observer,
      tools,
      timers,
      options,
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      callLimits: {
        ...options.callLimits,
        toolTimeoutMs: options.toolTimeoutMs,
        approvalTimeoutMs: options.approvalTimeoutMs,
        maxInputBytes: options.maxInputBytes,
        maxResultChars: options.maxResultChars,
        reconnectGraceMs: options.reconnectGraceMs,
        maxConcurrentCalls: options.maxConcurrentCalls,
      },
      expectedRuntime: expectedRuntime(options),
      startInput: {
        agent: options.agent,
        conversation: options.conversation ?? "new",
        mode: options.mode ?? DEFAULT_PERMISSION_MODE,
        cwd,
        clientInfo: options.clientInfo ?? { name: "toolrelay" },
      },
      dispose,
      onRuntime,
      sandbox,
      hold,
    });
    listenFrom(session, options.on);
    emitError = (error) => session.emit("error", error);
    try {
      await session.start();
    } catch (error) {
      await session.close();
      throw error;
    }
    observer.sessionOpened(options.backend.kind);
    return session;
  } catch (error) {
    log.write("warn", "session", "session start failed", {
      code: (error as { code?: string | undefined })?.code,
      error: (error as Error)?.message ?? String(error),
    });
    await dispose();
    if (error instanceof ToolrelayError) throw error;
    throw new ToolrelayError("CONNECT_FAILED", `cannot start the session: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
}

/** Every credential the session may hold, in every form it takes in text (for the log's redaction). */
function secretsOf(options: LinkSessionOptions): string[] {
  const backend = options.backend as { token?: unknown; apiKey?: unknown };
  const secrets = [backend.token, backend.apiKey, process.env.LETTA_API_KEY].filter(
    (secret): secret is string => typeof secret === "string" && secret.trim().length >= 4,
  );
  return secrets.flatMap((secret) => secretForms(secret.trim()));
}

/** The runtime the options name: an existing agent with the default or an existing conversation. */
function expectedRuntime(options: LinkSessionOptions): Scope | undefined {
  const conversation = options.conversation ?? "new";
  if (!("id" in options.agent) || conversation === "new") return undefined;
  return { agent_id: options.agent.id, conversation_id: conversation };
}

/** `options.on`: each listener is attached before the session connects. */
function listenFrom(session: Session, listeners: SessionListeners | undefined): void {
  if (listeners === undefined) return;
  const add = session.on.bind(session) as (name: keyof SessionEvents, listener: (...args: never[]) => void) => unknown;
  for (const name of SESSION_EVENT_NAMES) {
    const listener = listeners[name];
    if (listener !== undefined) add(name, listener);
  }
}
