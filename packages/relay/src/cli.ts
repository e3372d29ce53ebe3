/**
 * The relay's command line: `toolrelay-relay [--port N] [--host H] [--api-key K]...
 * [--api-keys-file PATH] [--listener-mode paired|split|single] [--<bound> N]...`. Prints
 * `Relay listening on http://HOST:PORT` on stdout once it accepts connections; logs go to stderr.
 * Prefer `--api-keys-file` over `--api-key`: command lines are visible to other local users.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { isToolrelayError } from "toolrelay/protocol";
import type { Relay } from "./relay.js";
import { startRelay } from "./relay-server.js";
import type { ListenerMode, RelayLogger, RelayOptions } from "./relay-options.js";
import type { RelaySandboxOptions } from "./sandbox-options.js";

/** Numeric bounds settable on the command line: flag → option (docs/relay.md "Bounds"). */
const BOUND_FLAGS = {
  "max-sdk-frame-bytes": "maxSdkFrameBytes",
  "max-listener-frame-bytes": "maxListenerFrameBytes",
  "max-unacked-bytes": "maxUnackedBytes",
  "max-unacked-bytes-per-tenant": "maxUnackedBytesPerTenant",
  "max-environments-per-tenant": "maxEnvironmentsPerTenant",
  "max-sessions-per-tenant": "maxSessionsPerTenant",
  "max-outstanding-calls-per-tenant": "maxOutstandingCallsPerTenant",
  "unowned-call-timeout-ms": "unownedCallTimeoutMs",
  "sdk-resume-window-ms": "sdkResumeWindowMs",
  "environment-grace-ms": "environmentGraceMs",
  "handshake-timeout-ms": "handshakeTimeoutMs",
  "max-connections": "maxConnections",
  "max-connections-per-address": "maxConnectionsPerAddress",
  "heartbeat-interval-ms": "heartbeatIntervalMs",
  "max-sandboxes-per-tenant": "maxSandboxesPerTenant",
} as const satisfies Record<string, keyof RelayOptions>;

/** The `toolrelay-relay --help` text. */
export const RELAY_CLI_USAGE = `Usage: toolrelay-relay [options]

  --port <n>              port to listen on (default 0: any free port)
  --host <address>        address to bind (default 127.0.0.1; non-loopback needs API keys)
  --api-key <key>         accept this Bearer key, a tenant of its own (repeatable)
  --api-keys-file <path>  keys, one per line: "<key>" (a tenant of its own) or
                          "<tenant> <key>" (keys of one tenant share its environments);
                          blank lines and # comments are skipped
  --listener-mode <mode>  paired (default, like Letta Cloud) | split | single
  --allow-query-token     accept ?token=<key> on SDK status sockets (puts keys in URLs)
  --allowed-host <name>   accept this Host header besides loopback names (repeatable)
  --enable-test-hooks     serve the /_relay/* test routes (scoped to the caller's tenant)
  --no-json-pongs         do not answer SDK status sockets' JSON pings
  --verbose               log connections and registrations to stderr
  --debug                 also log every routing decision (never frame contents or keys)
  --help                  print this text

Sandboxes (off unless --sandbox-command is given; docs/relay.md "Sandboxes"):
  --sandbox-command <path>      the listener executable (absolute path; no default)
  --sandbox-arg <arg>           one argument before --env-name <name> (repeatable;
                                --sandbox-arg=--debug for one that starts with -)
  --sandbox-env <NAME=VALUE>    one variable of the sandbox's environment (repeatable;
                                nothing else of this process's environment is passed on)
  --sandbox-read-only <path>    a path the listener needs, visible read-only (repeatable)
  --sandbox-isolation <mode>    namespace (default: own user/mount/PID namespaces) | none
  --sandbox-dir <path>          where sandbox directories are made (default: a temp dir)
  --sandbox-shared-state-env <NAME>  variable naming the tenant's shared state directory
                                (LETTA_LOCAL_BACKEND_DIR for Letta Code's local backend)
  --sandbox-minute-ms <n>       length of one TTL minute in ms (default 60000)

Bounds (defaults in docs/relay.md):
${Object.keys(BOUND_FLAGS)
  .map((flag) => `  --${flag} <n>`)
  .join("\n")}
`;

/** Where the CLI writes. */
export interface RelayCliIo {
  /** One line of output (the listening address, `--help`). */
  stdout(line: string): void;
  /** One line of log or error. */
  stderr(line: string): void;
}

const processIo: RelayCliIo = {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
};

/** Thrown for bad command lines (exit code 2). */
export class RelayCliUsageError extends Error {}

/** The keys of an API keys file: keys of their own tenant, and keys by tenant name. */
export interface ApiKeysFile {
  apiKeys: string[];
  tenants: Record<string, string[]>;
}

/**
 * Reads an API keys file: per line `<key>` (a tenant of its own) or `<tenant> <key>`; blank
 * lines and lines starting with `#` are skipped. Throws RelayCliUsageError on a line with more
 * than two words (the line's number only: never its text, which holds a key).
 */
export function readApiKeysFile(path: string): ApiKeysFile {
  const result: ApiKeysFile = { apiKeys: [], tenants: {} };
  readFileSync(path, "utf8")
    .split(/\r?\n/)
    .forEach((raw, index) => {
      const line = raw.trim();
      if (line.length === 0 || line.startsWith("#")) return;
      const words = line.split(/\s+/);
      if (words.length === 1) result.apiKeys.push(words[0]!);
      else if (words.length === 2) {
        const keys = result.tenants[words[0]!] ?? [];
        keys.push(words[1]!);
        result.tenants[words[0]!] = keys;
      } else throw new RelayCliUsageError(`${path} line ${index + 1}: expected "<key>" or "<tenant> <key>"`);
    });
  return result;
}

function stderrLogger(io: RelayCliIo, level: "info" | "debug"): RelayLogger {
  const write = (message: string, details?: Record<string, unknown>): void =>
    io.stderr(details ? `[relay] ${message} ${JSON.stringify(details)}` : `[relay] ${message}`);
  return { debug: level === "debug" ? write : () => {}, info: write, warn: write };
}

/** The flags of `argv`; a flag this CLI does not know is a usage error. */
function readArguments(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        "api-key": { type: "string", multiple: true },
        "api-keys-file": { type: "string", multiple: true },
        "listener-mode": { type: "string" },
        "allow-query-token": { type: "boolean" },
        "allowed-host": { type: "string", multiple: true },
        "enable-test-hooks": { type: "boolean" },
        "no-json-pongs": { type: "boolean" },
        "sandbox-command": { type: "string" },
        "sandbox-arg": { type: "string", multiple: true },
        "sandbox-env": { type: "string", multiple: true },
        "sandbox-read-only": { type: "string", multiple: true },
        "sandbox-isolation": { type: "string" },
        "sandbox-dir": { type: "string" },
        "sandbox-shared-state-env": { type: "string" },
        "sandbox-minute-ms": { type: "string" },
        ...Object.fromEntries(Object.keys(BOUND_FLAGS).map((flag) => [flag, { type: "string" as const }])),
        verbose: { type: "boolean" },
        debug: { type: "boolean" },
        help: { type: "boolean" },
      },
    }).values;
  } catch (error) {
    throw new RelayCliUsageError((error as Error).message);
  }
}

/** Turns arguments into relay options (`undefined` when `--help` was asked for). */
export function parseRelayCliArguments(argv: readonly string[], io: RelayCliIo = processIo): RelayOptions | undefined {
  const values = readArguments(argv);
  if (values.help) return undefined;
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new RelayCliUsageError(`invalid --port ${values.port}`);
  const mode = values["listener-mode"] ?? "paired";
  if (mode !== "paired" && mode !== "split" && mode !== "single") {
    throw new RelayCliUsageError(`--listener-mode must be paired, split or single`);
  }
  const apiKeys = [...((values["api-key"] as string[] | undefined) ?? [])];
  const tenants: Record<string, string[]> = {};
  for (const path of (values["api-keys-file"] as string[] | undefined) ?? []) {
    let file: ApiKeysFile;
    try {
      file = readApiKeysFile(path);
    } catch (error) {
      if (error instanceof RelayCliUsageError) throw error;
      throw new RelayCliUsageError(`cannot read --api-keys-file ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
    }
    apiKeys.push(...file.apiKeys);
    for (const [tenant, keys] of Object.entries(file.tenants)) tenants[tenant] = [...(tenants[tenant] ?? []), ...keys];
  }
  const bounds: Partial<Record<(typeof BOUND_FLAGS)[keyof typeof BOUND_FLAGS], number>> = {};
  for (const [flag, option] of Object.entries(BOUND_FLAGS)) {
    const text = (values as Record<string, unknown>)[flag] as string | undefined;
    if (text === undefined) continue;
    const value = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) throw new RelayCliUsageError(`--${flag} must be a non-negative integer`);
    bounds[option] = value;
  }
  const level = values.debug ? "debug" : values.verbose ? "info" : undefined;
  const sandbox = sandboxFromFlags(values as Record<string, unknown>);
  return {
    port,
    host: (values.host as string | undefined) ?? "127.0.0.1",
    apiKeys,
    ...(Object.keys(tenants).length > 0 ? { tenants } : {}),
    listenerMode: mode as ListenerMode,
    allowQueryToken: (values["allow-query-token"] as boolean | undefined) ?? false,
    ...(values["allowed-host"] ? { allowedHosts: values["allowed-host"] as string[] } : {}),
    enableTestHooks: (values["enable-test-hooks"] as boolean | undefined) ?? false,
    ...(values["no-json-pongs"] ? { respondToJsonPings: false } : {}),
    ...bounds,
    ...(sandbox ? { sandbox } : {}),
    ...(level ? { logger: stderrLogger(io, level) } : {}),
  };
}

/** The `--sandbox-*` flags as sandbox options (`undefined` without `--sandbox-command`). */
function sandboxFromFlags(values: Record<string, unknown>): RelaySandboxOptions | undefined {
  const command = values["sandbox-command"] as string | undefined;
  const list = (name: string) => (values[name] as string[] | undefined) ?? [];
  const others = [
    "sandbox-arg",
    "sandbox-env",
    "sandbox-read-only",
    "sandbox-isolation",
    "sandbox-dir",
    "sandbox-shared-state-env",
    "sandbox-minute-ms",
  ];
  if (command === undefined) {
    const stray = others.find((name) => values[name] !== undefined);
    if (stray) throw new RelayCliUsageError(`--${stray} needs --sandbox-command`);
    return undefined;
  }
  const env: Record<string, string> = {};
  for (const entry of list("sandbox-env")) {
    const at = entry.indexOf("=");
    if (at <= 0) throw new RelayCliUsageError(`--sandbox-env must be NAME=VALUE (got ${JSON.stringify(entry.slice(0, 40))})`);
    env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  const isolation = values["sandbox-isolation"] as string | undefined;
  if (isolation !== undefined && isolation !== "namespace" && isolation !== "none")
    throw new RelayCliUsageError("--sandbox-isolation must be namespace or none");
  const minute = values["sandbox-minute-ms"] as string | undefined;
  if (minute !== undefined && !/^\d+$/.test(minute)) throw new RelayCliUsageError("--sandbox-minute-ms must be a positive integer");
  return {
    command,
    args: list("sandbox-arg"),
    env,
    readOnlyPaths: list("sandbox-read-only"),
    ...(isolation ? { isolation: isolation as "namespace" | "none" } : {}),
    ...(values["sandbox-dir"] ? { directory: values["sandbox-dir"] as string } : {}),
    ...(values["sandbox-shared-state-env"] ? { sharedStateEnv: values["sandbox-shared-state-env"] as string } : {}),
    ...(minute ? { minuteMs: Number(minute) } : {}),
  };
}

/**
 * Runs the CLI: starts the relay and prints its address. Resolves with the running relay, or
 * `undefined` after `--help` or an error (then `process.exitCode` is set: 2 for usage, 1 otherwise).
 */
export async function runRelayCli(argv: readonly string[], io: RelayCliIo = processIo): Promise<Relay | undefined> {
  let options: RelayOptions | undefined;
  try {
    options = parseRelayCliArguments(argv, io);
  } catch (error) {
    io.stderr(`toolrelay-relay: ${(error as Error).message}\n\n${RELAY_CLI_USAGE}`);
    process.exitCode = 2;
    return undefined;
  }
  if (!options) {
    io.stdout(RELAY_CLI_USAGE);
    return undefined;
  }
  try {
    const relay = await startRelay(options);
    io.stdout(`Relay listening on ${relay.httpUrl}`);
    const tenants = relay.stats().tenants.length;
    const keys = (options.apiKeys?.length ?? 0) + Object.values(options.tenants ?? {}).reduce((sum, list) => sum + list.length, 0);
    io.stderr(
      `[relay] listener mode ${options.listenerMode}; ${keys === 0 ? "no API keys (loopback only, one tenant)" : `${keys} API key(s), ${tenants} tenant(s)`}`,
    );
    if (options.sandbox) io.stderr(`[relay] sandboxes: ${options.sandbox.command} (isolation ${options.sandbox.isolation ?? "namespace"})`);
    return relay;
  } catch (error) {
    const message = isToolrelayError(error) ? error.message : `relay failed to start: ${(error as Error).message}`;
    io.stderr(`toolrelay-relay: ${message}`);
    process.exitCode = 1;
    return undefined;
  }
}
