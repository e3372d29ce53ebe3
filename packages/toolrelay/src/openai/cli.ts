/**
 * The bridge's command line, `toolrelay-openai <backend> <agent> [options]` (docs/openai-bridge.md
 * "Command-line tools"). It checks its upstream first ({@link checkBridgeUpstream}: exit 1 naming
 * the address when it is out of reach), then prints `OpenAI bridge listening on
 * http://HOST:PORT/v1` on stdout once it accepts connections; everything else goes to stderr.
 * Prefer `--api-keys-file` over `--api-key`: command lines are visible to other local users.
 */
import {
  allApiKeys,
  type CliArguments,
  type CliCommand,
  type CliIo,
  CliUsageError,
  processIo,
  readApiKeysFile,
  runCommand,
} from "@toolrelay/cli-kit";
import manifest from "../../package.json" with { type: "json" };
import type { AgentOptions, BackendOptions, PermissionMode } from "../session/session-options.js";
import { permissionModeSchema } from "../wire/runtime-frames.js";
import { DEFAULT_PERMISSION_MODE } from "../internal/permission-modes.js";
import type { OpenAiBridgeOptions } from "./bridge-options.js";
import { checkBridgeUpstream } from "./check-upstream.js";
import { startOpenAiBridge, type OpenAiBridge } from "./openai-bridge.js";
import { THREAD_HEADER } from "./thread-headers.js";

/** Numeric bounds settable on the command line: flag → option (docs/openai-bridge.md "Options"). */
const BOUND_FLAGS = {
  "max-body-bytes": "maxBodyBytes",
  "max-threads": "maxThreads",
  "thread-idle-ms": "threadIdleMs",
  "tool-result-timeout-ms": "toolResultTimeoutMs",
  "max-history-chars": "maxHistoryChars",
  "keep-alive-ms": "keepAliveMs",
} as const satisfies Record<string, keyof OpenAiBridgeOptions>;

const BACKEND_FLAGS = ["local-url", "spawn", "cloud-environment", "backend-json"] as const;
const PERMISSION_MODES: readonly PermissionMode[] = permissionModeSchema.options;

/** `toolrelay-openai`: its options, from which the parser and `--help` are made. */
export const OPENAI_COMMAND: CliCommand = {
  name: "toolrelay-openai",
  synopsis: "<backend> <agent> [options]",
  version: manifest.version,
  groups: [
    {
      title: "Backend (exactly one; checked at start: exit 1 when it cannot be reached):",
      options: {
        "local-url": {
          type: "string",
          value: "<url>",
          help: "a running Letta Code app-server (ws://127.0.0.1:PORT/ws);\nits token, if any, from env LETTA_APP_SERVER_TOKEN",
        },
        spawn: { type: "boolean", help: "start `letta server --listen` (letta on PATH), shared by all threads" },
        "cloud-environment": { type: "string", value: "<id>", help: "a Letta Cloud environment by connection id (key: env LETTA_API_KEY)" },
        "backend-json": { type: "string", value: "<json>", help: "any createSession backend object, passed through as it is" },
      },
    },
    {
      title: "Agent (exactly one):",
      options: {
        "agent-id": { type: "string", value: "<id>", help: "every thread is a conversation of this agent" },
        "create-agent": { type: "string", value: "<model>", help: "create one agent per API key with this model handle" },
      },
    },
    {
      title: "Options:",
      options: {
        port: { type: "string", value: "<n>", help: "port (default 0: any free port)" },
        host: { type: "string", value: "<address>", help: "address to bind (default 127.0.0.1; non-loopback needs API keys)" },
        "api-key": { type: "string", multiple: true, value: "<key>", help: "accept this Bearer key (repeatable)" },
        "api-keys-file": {
          type: "string",
          multiple: true,
          value: "<path>",
          help: 'keys, one a line: "<key>", "<tenant> <key>" or\n"<tenant> listener|sdk <key>" (the relay\'s format; the bridge\nhas no tenants or roles: each key is its own principal);\nblank lines and # comments are skipped (repeatable)',
        },
        "allowed-host": {
          type: "string",
          multiple: true,
          value: "<name>",
          help: "accept this Host header besides loopback names (repeatable)",
        },
        "allowed-origin": {
          type: "string",
          multiple: true,
          value: "<origin>",
          help: "accept browser requests from this origin (repeatable)",
        },
        "model-id": { type: "string", value: "<id>", help: "the model id clients name (default letta-code)" },
        "tool-execution": { type: "string", value: "<who>", help: "client (default) | runtime" },
        workspace: { type: "string", value: "<where>", help: "isolated | runtime | <directory>" },
        mode: {
          type: "string",
          value: "<mode>",
          help: `the runtime's permission mode: ${PERMISSION_MODES.join(" | ")} (default ${DEFAULT_PERMISSION_MODE}: the runtime's own tools are denied, the client's run; --tool-execution runtime needs one)`,
        },
        "tool-nudge": { type: "string", value: "<text>", help: "the instruction added to new user messages when the client has tools" },
        "no-tool-nudge": { type: "boolean", help: "add none" },
        "thread-header": { type: "string", value: "<name>", help: `header that names a thread (default ${THREAD_HEADER}; "none": off)` },
        "thread-metadata": { type: "string", value: "<key>", help: 'metadata key that names a thread (default thread_id; "none": off)' },
        "thread-from-user": { type: "boolean", help: 'the request\'s "user" field names the thread' },
        verbose: { type: "boolean", help: "log handled errors to stderr" },
      },
    },
    {
      title: 'Bounds (each sets the bridge option named beside it; defaults in docs/openai-bridge.md "Options"):',
      options: Object.fromEntries(
        Object.entries(BOUND_FLAGS).map(([flag, option]) => [flag, { type: "string" as const, value: "<n>", help: option }]),
      ),
    },
  ],
};

/**
 * The bridge options a parsed command line asks for; `env` supplies the tokens. Throws
 * {@link CliUsageError} for a value it cannot use.
 */
export function bridgeOptionsOf(args: CliArguments, env: NodeJS.ProcessEnv = process.env, io: CliIo = processIo): OpenAiBridgeOptions {
  const options: OpenAiBridgeOptions = { backend: backendOf(args, env), agent: agentOf(args) };
  const port = args.integer("port", { max: 65_535 });
  if (port !== undefined) options.port = port;
  const host = args.text("host");
  if (host !== undefined) options.host = host;
  const apiKeys = [...args.list("api-key"), ...args.list("api-keys-file").flatMap((path) => allApiKeys(readApiKeysFile(path)))];
  if (apiKeys.length > 0) options.apiKeys = apiKeys;
  if (args.has("allowed-host")) options.allowedHosts = args.list("allowed-host");
  if (args.has("allowed-origin")) options.allowedOrigins = args.list("allowed-origin");
  const modelId = args.text("model-id");
  if (modelId !== undefined) options.modelId = modelId;
  const execution = args.text("tool-execution");
  if (execution !== undefined) {
    if (execution !== "client" && execution !== "runtime") throw new CliUsageError("--tool-execution must be client or runtime");
    options.toolExecution = execution;
  }
  const workspace = args.text("workspace");
  if (workspace !== undefined) options.workspace = workspace === "isolated" || workspace === "runtime" ? workspace : { cwd: workspace };
  const mode = args.text("mode");
  if (mode !== undefined) {
    const known = PERMISSION_MODES.find((candidate) => candidate === mode);
    if (known === undefined) throw new CliUsageError(`--mode must be one of ${PERMISSION_MODES.join(", ")}`);
    options.session = { mode: known };
  } else if (options.toolExecution === "runtime") {
    // The bridge would refuse it too, but only after the upstream check: a usage error is sooner.
    throw new CliUsageError(
      `--tool-execution runtime needs --mode: the default (${DEFAULT_PERMISSION_MODE}) denies every call of the runtime's own tools (unrestricted: they run unasked; standard: the read-only ones run)`,
    );
  }
  if (args.flag("no-tool-nudge")) options.toolNudge = false;
  else if (args.has("tool-nudge")) options.toolNudge = args.text("tool-nudge");
  const header = args.text("thread-header");
  const metadata = args.text("thread-metadata");
  options.threadKeys = {
    ...(header === undefined ? {} : { header: header === "none" ? false : header }),
    ...(metadata === undefined ? {} : { metadata: metadata === "none" ? false : metadata }),
    ...(args.flag("thread-from-user") ? { user: true } : {}),
  };
  for (const [flag, option] of Object.entries(BOUND_FLAGS)) {
    const value = args.integer(flag);
    if (value !== undefined) options[option] = value;
  }
  if (args.flag("verbose"))
    options.onError = (error, context) =>
      io.stderr(`[toolrelay-openai] ${context.threadId ? `thread ${context.threadId}: ` : ""}${error.message}\n`);
  return options;
}

/**
 * Runs the CLI: checks the upstream, starts the bridge and prints its address. Resolves with the
 * exit code (the caller sets it on the process) and the running bridge, if it started.
 */
export async function runOpenAiCli(
  argv: readonly string[],
  io: CliIo = processIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ exitCode: number; bridge?: OpenAiBridge | undefined }> {
  const outcome = await runCommand(
    OPENAI_COMMAND,
    argv,
    async (args) => {
      const options = bridgeOptionsOf(args, env, io);
      await checkBridgeUpstream(options.backend);
      const bridge = await startOpenAiBridge(options);
      io.stdout(`OpenAI bridge listening on ${bridge.url}\n`);
      const keys = options.apiKeys?.length ?? 0;
      io.stderr(
        `[toolrelay-openai] model "${options.modelId ?? "letta-code"}"; tools run by the ${options.toolExecution ?? "client"}; ${keys === 0 ? "no API keys (loopback only)" : `${keys} API key(s)`}\n`,
      );
      return bridge;
    },
    io,
  );
  return { exitCode: outcome.exitCode, ...(outcome.started ? { bridge: outcome.started } : {}) };
}

function backendOf(args: CliArguments, env: NodeJS.ProcessEnv): BackendOptions {
  const given = BACKEND_FLAGS.filter((flag) => args.has(flag));
  if (given.length !== 1) throw new CliUsageError("give exactly one of --local-url, --spawn, --cloud-environment and --backend-json");
  if (args.flag("spawn")) return { kind: "local", spawn: true };
  const url = args.text("local-url");
  if (url !== undefined) {
    const token = env.LETTA_APP_SERVER_TOKEN;
    return { kind: "local", url, ...(token ? { token } : {}) };
  }
  const connectionId = args.text("cloud-environment");
  if (connectionId !== undefined) return { kind: "cloud", environment: { connectionId } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(args.text("backend-json")!);
  } catch {
    throw new CliUsageError("--backend-json is not valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new CliUsageError("--backend-json must be a JSON object");
  return parsed as BackendOptions;
}

function agentOf(args: CliArguments): AgentOptions {
  const id = args.text("agent-id");
  const model = args.text("create-agent");
  if ((id === undefined) === (model === undefined)) throw new CliUsageError("give exactly one of --agent-id and --create-agent");
  return id !== undefined ? { id } : { create: { model: model!, name: "toolrelay-openai" } };
}
