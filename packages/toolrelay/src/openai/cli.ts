/**
 * The bridge's command line, `toolrelay-openai`. Prints `OpenAI bridge listening on
 * http://HOST:PORT/v1` on stdout once it accepts connections; everything else goes to stderr.
 * Prefer `--api-keys-file` over `--api-key`: command lines are visible to other local users.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { isToolrelayError } from "../errors.js";
import type { AgentOptions, BackendOptions, PermissionMode } from "../session/session-options.js";
import type { OpenAiBridgeOptions } from "./bridge-options.js";
import { startOpenAiBridge, type OpenAiBridge } from "./openai-bridge.js";

/** Numeric bounds settable on the command line: flag → option (docs/openai-bridge.md "Options"). */
const BOUND_FLAGS = {
  "max-body-bytes": "maxBodyBytes",
  "max-threads": "maxThreads",
  "thread-idle-ms": "threadIdleMs",
  "tool-result-timeout-ms": "toolResultTimeoutMs",
  "max-history-chars": "maxHistoryChars",
  "keep-alive-ms": "keepAliveMs",
} as const satisfies Record<string, keyof OpenAiBridgeOptions>;

export const OPENAI_CLI_USAGE = `Usage: toolrelay-openai <backend> <agent> [options]

Backend (exactly one):
  --local-url <url>          a running Letta Code app-server (ws://127.0.0.1:PORT/ws);
                             its token, if any, from env LETTA_APP_SERVER_TOKEN
  --spawn                    start \`letta server --listen\` (letta on PATH), shared by all threads
  --cloud-environment <id>   a Letta Cloud environment by connection id (key: env LETTA_API_KEY)
  --backend-json <json>      any createSession backend object, passed through as it is

Agent (exactly one):
  --agent-id <id>            every thread is a conversation of this agent
  --create-agent <model>     create one agent per API key with this model handle

Options:
  --port <n>                 port (default 0: any free port)
  --host <address>           address to bind (default 127.0.0.1; non-loopback needs API keys)
  --api-key <key>            accept this Bearer key (repeatable)
  --api-keys-file <path>     keys, one per line; blank lines and # comments are skipped
  --allowed-host <name>      accept this Host header besides loopback names (repeatable)
  --allowed-origin <origin>  accept browser requests from this origin (repeatable)
  --model-id <id>            the model id clients name (default letta-code)
  --tool-execution <who>     client (default) | runtime
  --workspace <where>        isolated | runtime | <directory>
  --mode <mode>              the runtime's permission mode: standard | acceptEdits | unrestricted | strict
  --tool-nudge <text>        the instruction added to new user messages when the client has tools
  --no-tool-nudge            add none
  --thread-header <name>     header that names a thread (default x-toolrelay-thread; "none": off)
  --thread-metadata <key>    metadata key that names a thread (default thread_id; "none": off)
  --thread-from-user         the request's "user" field names the thread
  --verbose                  log handled errors to stderr
  --help                     print this text

Bounds (defaults in docs/openai-bridge.md):
${Object.keys(BOUND_FLAGS)
  .map((flag) => `  --${flag} <n>`)
  .join("\n")}
`;

/** Where the CLI writes. */
export interface OpenAiCliIo {
  stdout(line: string): void;
  stderr(line: string): void;
}

const processIo: OpenAiCliIo = {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
};

/** Thrown for a bad command line (exit code 2). */
export class OpenAiCliUsageError extends Error {}

/** Turns arguments into bridge options (`undefined` for `--help`). `env` supplies the tokens. */
export function parseOpenAiCliArguments(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  io: OpenAiCliIo = processIo,
): OpenAiBridgeOptions | undefined {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        "local-url": { type: "string" },
        spawn: { type: "boolean" },
        "cloud-environment": { type: "string" },
        "backend-json": { type: "string" },
        "agent-id": { type: "string" },
        "create-agent": { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        "api-key": { type: "string", multiple: true },
        "api-keys-file": { type: "string", multiple: true },
        "allowed-host": { type: "string", multiple: true },
        "allowed-origin": { type: "string", multiple: true },
        "model-id": { type: "string" },
        "tool-execution": { type: "string" },
        workspace: { type: "string" },
        mode: { type: "string" },
        "tool-nudge": { type: "string" },
        "no-tool-nudge": { type: "boolean" },
        "thread-header": { type: "string" },
        "thread-metadata": { type: "string" },
        "thread-from-user": { type: "boolean" },
        ...Object.fromEntries(Object.keys(BOUND_FLAGS).map((flag) => [flag, { type: "string" as const }])),
        verbose: { type: "boolean" },
        help: { type: "boolean" },
      },
    }));
  } catch (error) {
    throw new OpenAiCliUsageError((error as Error).message);
  }
  if (values.help) return undefined;
  const text = (name: string): string | undefined => values[name] as string | undefined;
  const list = (name: string): string[] => (values[name] as string[] | undefined) ?? [];

  const options: OpenAiBridgeOptions = { backend: backendOf(values, env), agent: agentOf(values) };
  if (text("port") !== undefined) options.port = integer("port", text("port")!);
  if (text("host") !== undefined) options.host = text("host");
  const apiKeys = [...list("api-key"), ...list("api-keys-file").flatMap(readKeysFile)];
  if (apiKeys.length > 0) options.apiKeys = apiKeys;
  if (list("allowed-host").length > 0) options.allowedHosts = list("allowed-host");
  if (list("allowed-origin").length > 0) options.allowedOrigins = list("allowed-origin");
  if (text("model-id") !== undefined) options.modelId = text("model-id");
  const execution = text("tool-execution");
  if (execution !== undefined) {
    if (execution !== "client" && execution !== "runtime") throw new OpenAiCliUsageError("--tool-execution must be client or runtime");
    options.toolExecution = execution;
  }
  const workspace = text("workspace");
  if (workspace !== undefined) options.workspace = workspace === "isolated" || workspace === "runtime" ? workspace : { cwd: workspace };
  const mode = text("mode");
  if (mode !== undefined) {
    if (!["standard", "acceptEdits", "unrestricted", "strict"].includes(mode))
      throw new OpenAiCliUsageError("--mode must be standard, acceptEdits, unrestricted or strict");
    options.session = { mode: mode as PermissionMode };
  }
  if (values["no-tool-nudge"]) options.toolNudge = false;
  else if (text("tool-nudge") !== undefined) options.toolNudge = text("tool-nudge");
  const header = text("thread-header");
  const metadata = text("thread-metadata");
  options.threadKeys = {
    ...(header === undefined ? {} : { header: header === "none" ? false : header }),
    ...(metadata === undefined ? {} : { metadata: metadata === "none" ? false : metadata }),
    ...(values["thread-from-user"] ? { user: true } : {}),
  };
  for (const [flag, option] of Object.entries(BOUND_FLAGS)) {
    const value = text(flag);
    if (value !== undefined) options[option] = integer(flag, value);
  }
  if (values.verbose)
    options.onError = (error, context) =>
      io.stderr(`[toolrelay-openai] ${context.threadId ? `thread ${context.threadId}: ` : ""}${error.message}`);
  return options;
}

/**
 * Runs the CLI: starts the bridge and prints its address. Resolves with the running bridge, or
 * `undefined` after `--help` or an error (then `process.exitCode` is 2 for usage, 1 otherwise).
 */
export async function runOpenAiCli(
  argv: readonly string[],
  io: OpenAiCliIo = processIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<OpenAiBridge | undefined> {
  let options: OpenAiBridgeOptions | undefined;
  try {
    options = parseOpenAiCliArguments(argv, env, io);
  } catch (error) {
    io.stderr(`toolrelay-openai: ${(error as Error).message}\n\n${OPENAI_CLI_USAGE}`);
    process.exitCode = 2;
    return undefined;
  }
  if (options === undefined) {
    io.stdout(OPENAI_CLI_USAGE);
    return undefined;
  }
  try {
    const bridge = await startOpenAiBridge(options);
    io.stdout(`OpenAI bridge listening on ${bridge.url}`);
    const keys = options.apiKeys?.length ?? 0;
    io.stderr(
      `[toolrelay-openai] model "${options.modelId ?? "letta-code"}"; tools run by the ${options.toolExecution ?? "client"}; ${keys === 0 ? "no API keys (loopback only)" : `${keys} API key(s)`}`,
    );
    return bridge;
  } catch (error) {
    io.stderr(`toolrelay-openai: ${isToolrelayError(error) ? error.message : `the bridge failed to start: ${(error as Error).message}`}`);
    process.exitCode = 1;
    return undefined;
  }
}

function backendOf(values: Record<string, unknown>, env: NodeJS.ProcessEnv): BackendOptions {
  const given = ["local-url", "spawn", "cloud-environment", "backend-json"].filter((flag) => values[flag] !== undefined);
  if (given.length !== 1) throw new OpenAiCliUsageError("give exactly one of --local-url, --spawn, --cloud-environment and --backend-json");
  if (values.spawn) return { kind: "local", spawn: true };
  if (typeof values["local-url"] === "string") {
    const token = env.LETTA_APP_SERVER_TOKEN;
    return { kind: "local", url: values["local-url"], ...(token ? { token } : {}) };
  }
  if (typeof values["cloud-environment"] === "string") return { kind: "cloud", environment: { connectionId: values["cloud-environment"] } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(values["backend-json"] as string);
  } catch {
    throw new OpenAiCliUsageError("--backend-json is not valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new OpenAiCliUsageError("--backend-json must be a JSON object");
  return parsed as BackendOptions;
}

function agentOf(values: Record<string, unknown>): AgentOptions {
  const id = values["agent-id"];
  const model = values["create-agent"];
  if ((id === undefined) === (model === undefined)) throw new OpenAiCliUsageError("give exactly one of --agent-id and --create-agent");
  return typeof id === "string" ? { id } : { create: { model: model as string, name: "toolrelay-openai" } };
}

function integer(flag: string, text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) throw new OpenAiCliUsageError(`--${flag} must be a non-negative integer`);
  return value;
}

/** The keys of a file: one a line; blank lines and `#` comments skipped. Errors name the file, never a key. */
function readKeysFile(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new OpenAiCliUsageError(`cannot read --api-keys-file ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
  }
  return text.split(/\r?\n/).flatMap((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return [];
    if (/\s/.test(line)) throw new OpenAiCliUsageError(`${path} line ${index + 1}: a key must not contain white space`);
    return [line];
  });
}
