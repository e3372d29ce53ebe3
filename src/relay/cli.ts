/**
 * The relay's command line: `toolrelay-relay [--port N] [--host H] [--api-key K]...
 * [--api-keys-file PATH] [--listener-mode paired|split|single] ...`. Prints
 * `Relay listening on http://HOST:PORT` on stdout once it accepts connections; logs go to stderr.
 * Prefer `--api-keys-file` over `--api-key`: command lines are visible to other local users.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { isToolrelayError } from "../errors.js";
import { startRelay, type Relay } from "./relay-server.js";
import type { ListenerMode, RelayLogger, RelayOptions } from "./relay-options.js";

export const RELAY_CLI_USAGE = `Usage: toolrelay-relay [options]

  --port <n>              port to listen on (default 0: any free port)
  --host <address>        address to bind (default 127.0.0.1; non-loopback needs API keys)
  --api-key <key>         accept this Bearer key (repeatable)
  --api-keys-file <path>  accept the keys in this file, one per line (# comments allowed)
  --listener-mode <mode>  paired (default, like Letta Cloud) | split | single
  --allow-query-token     accept ?token=<key> on SDK status sockets (puts keys in URLs)
  --allowed-host <name>   accept this Host header besides loopback names (repeatable)
  --enable-test-hooks     serve POST /_relay/close-listener and /_relay/drop-sdk-sockets
  --verbose               log connections and registrations to stderr
  --debug                 also log every routing decision (never frame contents or keys)
  --help                  print this text
`;

/** Where the CLI writes. */
export interface RelayCliIo {
  stdout(line: string): void;
  stderr(line: string): void;
}

const processIo: RelayCliIo = {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
};

/** Thrown for bad command lines (exit code 2). */
export class RelayCliUsageError extends Error {}

/** Reads an API keys file: one key per line; blank lines and lines starting with `#` are skipped. */
export function readApiKeysFile(path: string): string[] {
  return readFileSync(path, "utf8")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !line.startsWith("#"));
}

function stderrLogger(io: RelayCliIo, level: "info" | "debug"): RelayLogger {
  const write = (message: string, details?: Record<string, unknown>): void =>
    io.stderr(details ? `[relay] ${message} ${JSON.stringify(details)}` : `[relay] ${message}`);
  return { debug: level === "debug" ? write : () => {}, info: write, warn: write };
}

/** Turns arguments into relay options (`undefined` when `--help` was asked for). */
export function parseRelayCliArguments(argv: readonly string[], io: RelayCliIo = processIo): RelayOptions | undefined {
  let values;
  try {
    ({ values } = parseArgs({
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
        verbose: { type: "boolean" },
        debug: { type: "boolean" },
        help: { type: "boolean" },
      },
    }));
  } catch (error) {
    throw new RelayCliUsageError((error as Error).message);
  }
  if (values.help) return undefined;
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new RelayCliUsageError(`invalid --port ${values.port}`);
  const mode = values["listener-mode"] ?? "paired";
  if (mode !== "paired" && mode !== "split" && mode !== "single") {
    throw new RelayCliUsageError(`--listener-mode must be paired, split or single`);
  }
  const apiKeys = [...(values["api-key"] ?? [])];
  for (const path of values["api-keys-file"] ?? []) {
    try {
      apiKeys.push(...readApiKeysFile(path));
    } catch (error) {
      throw new RelayCliUsageError(`cannot read --api-keys-file ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
    }
  }
  const level = values.debug ? "debug" : values.verbose ? "info" : undefined;
  return {
    port,
    host: values.host ?? "127.0.0.1",
    apiKeys,
    listenerMode: mode as ListenerMode,
    allowQueryToken: values["allow-query-token"] ?? false,
    ...(values["allowed-host"] ? { allowedHosts: values["allowed-host"] } : {}),
    enableTestHooks: values["enable-test-hooks"] ?? false,
    ...(level ? { logger: stderrLogger(io, level) } : {}),
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
    const keys = options.apiKeys?.length ?? 0;
    io.stderr(`[relay] listener mode ${options.listenerMode}; ${keys === 0 ? "no API keys (loopback only)" : `${keys} API key(s)`}`);
    return relay;
  } catch (error) {
    const message = isToolrelayError(error) ? error.message : `relay failed to start: ${(error as Error).message}`;
    io.stderr(`toolrelay-relay: ${message}`);
    process.exitCode = 1;
    return undefined;
  }
}
