/**
 * A complete ACP agent on one connection: every ACP session is a toolrelay
 * session whose client tools include the editor tools, and whose approvals —
 * the runtime's own tools (Bash, Write, ...) its permission mode does not let
 * run at once, and client tools whose `needsApproval` says so (the editor's
 * `write_via_editor` included) — are asked of the user in the editor
 * (`session/request_permission`, see editor-permission.ts).
 *
 * | ACP (editor → agent)  | what happens                                                              |
 * | --------------------- | ------------------------------------------------------------------------- |
 * | `initialize`          | the editor's `clientCapabilities` are kept; the agent's are returned      |
 * | `session/new`         | working roots = `cwd` + `additionalDirectories`; `createSession(...)`     |
 * | `session/prompt`      | `runAcpPrompt` (see prompt-bridge.ts)                                      |
 * | `session/cancel`      | aborts the running turn; the prompt resolves `cancelled`                   |
 * | `session/close`       | aborts the turn, closes the toolrelay session                              |
 * | connection closed     | every session is closed                                                    |
 *
 * One `startAcpAgent` per connection: the capabilities of that connection's
 * `initialize` apply to its sessions. `mcpServers` of `session/new` are not
 * used (the runtime's own tools and the editor tools are offered).
 *
 * Permission modes: the session's `mode` is what {@link AcpAgentOptions.session}
 * returns; unset, it is the session default, `strict` (every call of a runtime
 * tool asks the editor; "Always allow <tool>" keeps a session quiet). The agent
 * advertises no ACP session modes (`session/set_mode`): a toolrelay session's
 * mode is fixed when its runtime starts.
 */
import { randomUUID } from "node:crypto";
import {
  agent as acpAgentApp,
  PROTOCOL_VERSION,
  RequestError,
  type AgentConnection,
  type ClientCapabilities,
  type Implementation,
  type Stream,
} from "@agentclientprotocol/sdk";
import { createSession } from "../session/create-session.js";
import { PACKAGE_VERSION } from "../internal/package-version.js";
import { DEFAULT_PERMISSION_MODE, type PermissionModeName } from "../internal/permission-modes.js";
import type { Session } from "../session/session.js";
import type { SessionOptions } from "../session/session-options.js";
import { isToolSource, type ClientTool } from "../tools/index.js";
import { editorChannelFor } from "./editor-capabilities.js";
import { editorPermissionDecider } from "./editor-permission.js";
import { createEditorTools } from "./editor-tools.js";
import { runAcpPrompt } from "./prompt-bridge.js";
import type { ToolCallPresenter } from "./tool-call-presentation.js";
import { WorkingRoots } from "./working-roots.js";

/** What `session/new` hands to {@link AcpAgentOptions.session}. */
export interface AcpSessionContext {
  /** The ACP session id (minted by the agent). */
  sessionId: string;
  /** The editor's working directory for the session (absolute). */
  cwd: string;
  /** `cwd` first, then `additionalDirectories`, normalized. */
  roots: readonly string[];
  /** What the editor advertised in `initialize`. */
  clientCapabilities: ClientCapabilities | undefined;
  /** The editor tools this session gets (already added to `tools`). */
  editorTools: readonly ClientTool[];
}

/** Options of the editor tools. */
export interface AcpEditorOptions {
  /** Deadline of each editor request (`fs/read_text_file`, `fs/write_text_file`), in ms. Default 10_000. */
  requestTimeoutMs?: number | undefined;
  /** Deadline of one editor tool call, in ms. Default: the session's `toolTimeoutMs` (60_000). */
  toolTimeoutMs?: number | undefined;
  /** Refuse `write_via_editor` without `expected_hash` on an existing, non-empty buffer. Default `false`. */
  requireExpectedHash?: boolean | undefined;
  /** Tool result text shown in the editor is cut to this many characters. Default 2_000. */
  maxToolContentChars?: number | undefined;
  /**
   * Whether `write_via_editor` asks the user (`session/request_permission`) before it writes.
   * Default: it asks unless the session's `mode` is `acceptEdits` or `unrestricted` — the modes in
   * which the runtime's own Write runs unasked, so the user already agreed to edits.
   */
  writeNeedsApproval?: boolean | undefined;
}

/** Options of `startAcpAgent`. */
export interface AcpAgentOptions {
  /**
   * The toolrelay session options for one ACP session (backend, agent,
   * conversation, ...). Called on `session/new`. The editor tools are added
   * before any `tools` given here; `canUseTool` defaults to asking the editor
   * (`session/request_permission`, `editorPermissionDecider`) for runtime tools
   * and for client tools that need approval alike. Required.
   */
  session(context: AcpSessionContext): SessionOptions | Promise<SessionOptions>;
  /** Sent as `agentInfo` in `initialize`. Default `{ name: "toolrelay-acp", version }`, the package's version. */
  agentInfo?: Implementation | undefined;
  /** Editor tool options. Default: see {@link AcpEditorOptions}. */
  editor?: AcpEditorOptions | undefined;
  /** Title, kind and locations of tool calls in the editor. Default: `presentToolCall`. */
  present?: ToolCallPresenter | undefined;
  /** Problems the agent handled itself (a session that failed to close, a session error event). Default: ignored. Never given tool inputs or results. */
  onError?: ((error: unknown, where: { sessionId?: string | undefined; phase: string }) => void) | undefined;
}

/** A running ACP agent (`startAcpAgent`): one toolrelay session per ACP session. */
export interface AcpAgent {
  /** The ACP connection. */
  readonly connection: AgentConnection;
  /** Resolves once the connection closed and every session was closed. */
  readonly closed: Promise<void>;
  /** The open ACP sessions. */
  sessionIds(): string[];
  /** The toolrelay session of an ACP session, if open. */
  sessionOf(sessionId: string): Session | undefined;
  /** Close every session and the connection. Idempotent. */
  close(): Promise<void>;
}

interface AcpSessionState {
  sessionId: string;
  session: Session;
  /** Its client tools (the editor tools first; a tool source's tools are not known here): their annotations present their calls. */
  tools: readonly ClientTool[];
  prompt: AbortController | undefined;
}

/** Serve ACP on `stream` (e.g. `ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin))`). */
export function startAcpAgent(stream: Stream, options: AcpAgentOptions): AcpAgent {
  const sessions = new Map<string, AcpSessionState>();
  const report = (error: unknown, where: { sessionId?: string | undefined; phase: string }) => {
    try {
      options.onError?.(error, where);
    } catch {
      // a failing reporter must not break the agent
    }
  };
  let clientCapabilities: ClientCapabilities | undefined;
  let closing: Promise<void> | undefined;

  const stateOf = (sessionId: string): AcpSessionState => {
    const state = sessions.get(sessionId);
    if (state === undefined) throw RequestError.sessionNotFound(sessionId);
    return state;
  };

  const closeSession = async (state: AcpSessionState): Promise<void> => {
    sessions.delete(state.sessionId);
    state.prompt?.abort();
    try {
      await state.session.close();
    } catch (error) {
      report(error, { sessionId: state.sessionId, phase: "close" });
    }
  };

  const app = acpAgentApp({ name: options.agentInfo?.name ?? "toolrelay-acp" })
    .onRequest("initialize", ({ params }) => {
      clientCapabilities = params.clientCapabilities;
      return {
        protocolVersion: PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: false,
          promptCapabilities: { image: false, audio: false, embeddedContext: true },
          sessionCapabilities: { additionalDirectories: {}, close: {} },
        },
        agentInfo: options.agentInfo ?? { name: "toolrelay-acp", version: PACKAGE_VERSION },
        authMethods: [],
      };
    })
    .onRequest("session/new", async ({ params, client }) => {
      if (closing) throw RequestError.internalError(undefined, "the agent is shutting down");
      const sessionId = randomUUID();
      let roots: WorkingRoots;
      try {
        roots = new WorkingRoots([params.cwd, ...(params.additionalDirectories ?? [])]);
      } catch (error) {
        throw RequestError.invalidParams({ reason: errorText(error) }, errorText(error));
      }
      const channel = editorChannelFor({
        client,
        sessionId,
        clientCapabilities,
        requestTimeoutMs: options.editor?.requestTimeoutMs,
      });
      // The session's mode is known once options.session answered; the tools ask for it at each call.
      let mode: PermissionModeName = DEFAULT_PERMISSION_MODE;
      const editorTools = createEditorTools({
        channel,
        roots,
        requireExpectedHash: options.editor?.requireExpectedHash,
        toolTimeoutMs: options.editor?.toolTimeoutMs,
        writeNeedsApproval: options.editor?.writeNeedsApproval ?? (() => writesNeedApproval(mode)),
      });
      const context: AcpSessionContext = { sessionId, cwd: roots.roots[0]!, roots: roots.roots, clientCapabilities, editorTools };
      let session: Session;
      const state = { sessionId, tools: editorTools, prompt: undefined } as Omit<AcpSessionState, "session"> & {
        session?: Session | undefined;
      };
      try {
        const sessionOptions = await options.session(context);
        mode = sessionOptions.mode ?? DEFAULT_PERMISSION_MODE;
        const tools = [...editorTools, ...(sessionOptions.tools ?? [])];
        state.tools = tools.filter((tool): tool is ClientTool => !isToolSource(tool));
        session = await createSession({
          ...sessionOptions,
          tools,
          canUseTool:
            sessionOptions.canUseTool ??
            editorPermissionDecider({ client, sessionId, present: options.present, turnSignal: () => state.prompt?.signal }),
        });
      } catch (error) {
        report(error, { sessionId, phase: "session/new" });
        throw RequestError.internalError({ reason: errorText(error) }, `could not start a toolrelay session: ${errorText(error)}`);
      }
      state.session = session;
      session.on("error", (error) => report(error, { sessionId, phase: "session" }));
      if (closing) {
        await session.close();
        throw RequestError.internalError(undefined, "the agent is shutting down");
      }
      sessions.set(sessionId, state as AcpSessionState);
      return { sessionId };
    })
    .onRequest("session/prompt", async ({ params, client, signal }) => {
      const state = stateOf(params.sessionId);
      if (state.prompt !== undefined) {
        throw RequestError.invalidRequest(undefined, "a prompt is already running in this session; cancel it or wait for it");
      }
      const controller = new AbortController();
      state.prompt = controller;
      // The prompt request itself cancelled ($/cancel_request) or the connection closed: cancel the turn too.
      const onRequestAbort = () => controller.abort(signal.reason);
      signal.addEventListener("abort", onRequestAbort, { once: true });
      try {
        return await runAcpPrompt({
          session: state.session,
          client,
          sessionId: state.sessionId,
          prompt: params.prompt,
          signal: controller.signal,
          present: options.present,
          tools: state.tools,
          maxToolContentChars: options.editor?.maxToolContentChars,
          onNotifyError: (error) => report(error, { sessionId: state.sessionId, phase: "session/update" }),
        });
      } finally {
        signal.removeEventListener("abort", onRequestAbort);
        if (state.prompt === controller) state.prompt = undefined;
      }
    })
    .onNotification("session/cancel", ({ params }) => {
      sessions.get(params.sessionId)?.prompt?.abort(new Error("session/cancel"));
    })
    .onRequest("session/close", async ({ params }) => {
      const state = sessions.get(params.sessionId);
      if (state !== undefined) await closeSession(state);
      return {};
    });

  const connection = app.connect(stream);
  const closeAll = async () => {
    await Promise.all([...sessions.values()].map((state) => closeSession(state)));
  };
  const closed = connection.closed.then(() => {
    closing ??= closeAll();
    return closing;
  });

  return {
    connection,
    closed,
    sessionIds: () => [...sessions.keys()],
    sessionOf: (sessionId) => sessions.get(sessionId)?.session,
    async close() {
      closing ??= closeAll();
      await closing;
      connection.close();
      await closed;
    },
  };
}

/** In `acceptEdits` and `unrestricted` the runtime's own Write runs unasked: the editor tools' writes do too. */
function writesNeedApproval(mode: PermissionModeName): boolean {
  return mode !== "acceptEdits" && mode !== "unrestricted";
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
