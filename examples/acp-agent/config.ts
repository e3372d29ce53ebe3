/**
 * The example agent's configuration, from environment variables (an editor
 * passes them in its agent server settings). See docs/acp.md.
 *
 * | variable                        | meaning                                                                 |
 * | ------------------------------- | ----------------------------------------------------------------------- |
 * | `TOOLRELAY_BACKEND_URL`         | local app-server, e.g. `ws://127.0.0.1:4500/ws` (the default backend)   |
 * | `TOOLRELAY_BACKEND_TOKEN`       | its capability token, if it requires one (sent as a Bearer header)      |
 * | `TOOLRELAY_SPAWN=1`             | start `letta server --listen` instead (needs `letta` on PATH)           |
 * | `TOOLRELAY_CLOUD_ENVIRONMENT`   | a Letta Cloud environment connection id: use the cloud backend          |
 * | `TOOLRELAY_CLOUD_SANDBOX=1`     | use the cloud backend on an SDK-managed sandbox (one per agent, or per session when the agent is created) |
 * | `TOOLRELAY_SANDBOX_TERMINATE_ON_CLOSE=1` | terminate the sandbox when the ACP session closes (default: its TTL ends it) |
 * | `TOOLRELAY_CLOUD_BASE_URL`      | cloud API base URL (default `https://api.letta.com`)                    |
 * | `LETTA_API_KEY`                 | cloud API key                                                           |
 * | `TOOLRELAY_AGENT_ID`            | drive this existing agent ...                                           |
 * | `TOOLRELAY_MODEL`               | ... or create one with this model handle (default `openai/gpt-5`)       |
 * | `TOOLRELAY_CONVERSATION`        | `new` (default), `default`, or a conversation id                       |
 * | `TOOLRELAY_MODE`                | runtime permission mode (default: the session's, `strict`: every runtime tool call asks the editor) |
 * | `TOOLRELAY_WORKSPACE`           | `editor` (default, local only): the runtime works in the editor's cwd; `runtime`: its own |
 * | `TOOLRELAY_EDITOR_TIMEOUT_MS`   | deadline of each editor request (default 10000)                         |
 * | `TOOLRELAY_REQUIRE_EXPECTED_HASH=1` | refuse blind overwrites of non-empty buffers                        |
 */
import type { AcpSessionContext } from "toolrelay/acp";
import type { BackendOptions, PermissionMode, SessionOptions } from "toolrelay";

export interface ExampleConfig {
  backend: BackendOptions;
  agent: SessionOptions["agent"];
  conversation: string;
  /** `undefined`: the session's default mode (`strict`). */
  mode: PermissionMode | undefined;
  useEditorCwd: boolean;
  editorTimeoutMs: number | undefined;
  requireExpectedHash: boolean;
}

const MODES: readonly PermissionMode[] = ["standard", "acceptEdits", "unrestricted", "strict"];

/** Reads the environment; throws an Error that says what to set. */
export function configFromEnv(env: NodeJS.ProcessEnv): ExampleConfig {
  let backend: BackendOptions;
  if (env.TOOLRELAY_CLOUD_SANDBOX === "1") {
    backend = {
      kind: "cloud",
      // An existing agent gets its agent's sandbox; an agent created per session is created in a sandbox of its own.
      sandbox: {
        createRoute: env.TOOLRELAY_AGENT_ID ? "agent" : "sandboxes",
        terminateOnClose: env.TOOLRELAY_SANDBOX_TERMINATE_ON_CLOSE === "1",
      },
      ...(env.TOOLRELAY_CLOUD_BASE_URL ? { baseUrl: env.TOOLRELAY_CLOUD_BASE_URL } : {}),
    };
  } else if (env.TOOLRELAY_CLOUD_ENVIRONMENT) {
    backend = {
      kind: "cloud",
      environment: { connectionId: env.TOOLRELAY_CLOUD_ENVIRONMENT },
      ...(env.TOOLRELAY_CLOUD_BASE_URL ? { baseUrl: env.TOOLRELAY_CLOUD_BASE_URL } : {}),
    };
  } else if (env.TOOLRELAY_SPAWN === "1") {
    backend = { kind: "local", spawn: true };
  } else if (env.TOOLRELAY_BACKEND_URL) {
    backend = {
      kind: "local",
      url: env.TOOLRELAY_BACKEND_URL,
      ...(env.TOOLRELAY_BACKEND_TOKEN ? { token: env.TOOLRELAY_BACKEND_TOKEN } : {}),
    };
  } else {
    throw new Error(
      "set TOOLRELAY_BACKEND_URL (a local `letta server --listen`), TOOLRELAY_SPAWN=1, TOOLRELAY_CLOUD_ENVIRONMENT or TOOLRELAY_CLOUD_SANDBOX=1",
    );
  }
  const mode = env.TOOLRELAY_MODE as PermissionMode | undefined;
  if (mode !== undefined && !MODES.includes(mode)) throw new Error(`TOOLRELAY_MODE must be one of ${MODES.join(", ")}`);
  const timeout = env.TOOLRELAY_EDITOR_TIMEOUT_MS === undefined ? undefined : Number(env.TOOLRELAY_EDITOR_TIMEOUT_MS);
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout > 0))
    throw new Error("TOOLRELAY_EDITOR_TIMEOUT_MS must be a positive integer");
  return {
    backend,
    agent: env.TOOLRELAY_AGENT_ID
      ? { id: env.TOOLRELAY_AGENT_ID }
      : { create: { model: env.TOOLRELAY_MODEL ?? "openai/gpt-5", name: "toolrelay-acp" } },
    conversation: env.TOOLRELAY_CONVERSATION ?? "new",
    mode,
    useEditorCwd: (env.TOOLRELAY_WORKSPACE ?? "editor") === "editor",
    editorTimeoutMs: timeout,
    requireExpectedHash: env.TOOLRELAY_REQUIRE_EXPECTED_HASH === "1",
  };
}

/** The toolrelay session for one ACP session. */
export function sessionOptionsFor(config: ExampleConfig, context: AcpSessionContext): SessionOptions {
  return {
    backend: config.backend,
    agent: config.agent,
    conversation: config.conversation,
    ...(config.mode !== undefined ? { mode: config.mode } : {}),
    // A local runtime works in the editor's folder; a cloud runtime works in its sandbox.
    ...(config.useEditorCwd && config.backend.kind === "local" ? { workspace: { cwd: context.cwd } } : {}),
    clientInfo: { name: "toolrelay-acp-example", version: "0.1.0" },
  };
}
