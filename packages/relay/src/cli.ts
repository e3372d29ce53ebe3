/**
 * The relay's command line, `toolrelay-relay [options]` (docs/relay.md "Command-line tools").
 * Prints `Relay listening on http://HOST:PORT` on stdout once it accepts connections; logs go to
 * stderr. Prefer `--api-keys-file` over `--api-key`: command lines are visible to other local users.
 * Exit codes: `ExitCode` of the CLI kit (0 ok, 1 it could not start, 2 a bad command line).
 */
import { type CliArguments, type CliCommand, type CliIo, CliUsageError, processIo, readApiKeysFile, runCommand } from "@toolrelay/cli-kit";
import manifest from "../package.json" with { type: "json" };
import type { Relay } from "./relay.js";
import { startRelay } from "./relay-server.js";
import { resolveRelayOptions } from "./resolve-relay-options.js";
import type { RelayClusterOptions } from "./cluster/cluster-options.js";
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

/** `toolrelay-relay`: its options, from which the parser and `--help` are made. */
export const RELAY_COMMAND: CliCommand = {
  name: "toolrelay-relay",
  synopsis: "[options]",
  version: manifest.version,
  groups: [
    {
      options: {
        port: { type: "string", value: "<n>", help: "port to listen on (default 0: any free port)" },
        host: { type: "string", value: "<address>", help: "address to bind (default 127.0.0.1; non-loopback needs API keys)" },
        "api-key": { type: "string", multiple: true, value: "<key>", help: "accept this Bearer key, a tenant of its own (repeatable)" },
        "api-keys-file": {
          type: "string",
          multiple: true,
          value: "<path>",
          help: 'keys, one a line: "<key>" (a tenant of its own),\n"<tenant> listener <key>" (may register and connect listeners),\n"<tenant> sdk <key>" (may list environments, open SDK sockets\nand manage sandboxes) or "<tenant> <key>" (both roles);\nkeys of one tenant share its environments; blank lines\nand # comments are skipped (repeatable)',
        },
        "listener-mode": { type: "string", value: "<mode>", help: "paired (default, like Letta Cloud) | split | single" },
        "allow-query-token": { type: "boolean", help: "accept ?token=<key> on SDK status sockets (puts keys in URLs)" },
        "allowed-host": {
          type: "string",
          multiple: true,
          value: "<name>",
          help: "accept this Host header besides loopback names (repeatable)",
        },
        "enable-test-hooks": { type: "boolean", help: "serve the /_relay/* test routes (scoped to the caller's tenant)" },
        "no-json-pongs": { type: "boolean", help: "do not answer SDK status sockets' JSON pings" },
        verbose: { type: "boolean", help: "log connections and registrations to stderr\n(warnings are always written)" },
        debug: { type: "boolean", help: "also log every routing decision (never frame contents or keys)" },
      },
    },
    {
      title: 'Sandboxes (off unless --sandbox-command is given; docs/relay.md "Sandboxes"):',
      options: {
        "sandbox-command": { type: "string", value: "<path>", help: "the listener executable (absolute path; no default)" },
        "sandbox-arg": {
          type: "string",
          multiple: true,
          value: "<arg>",
          help: "one argument before --env-name <name> (repeatable;\n--sandbox-arg=--debug for one that starts with -)",
        },
        "sandbox-env": {
          type: "string",
          multiple: true,
          value: "<NAME=VALUE>",
          help: "one variable of the sandbox's environment (repeatable;\nnothing else of this process's environment is passed on)",
        },
        "sandbox-read-only": {
          type: "string",
          multiple: true,
          value: "<path>",
          help: "a path the listener needs, visible read-only (repeatable)",
        },
        "sandbox-isolation": { type: "string", value: "<mode>", help: "namespace (default: own user/mount/PID namespaces) | none" },
        "sandbox-dir": { type: "string", value: "<path>", help: "where sandbox directories are made (default: a temp dir)" },
        "sandbox-shared-state-env": {
          type: "string",
          value: "<NAME>",
          help: "variable naming the tenant's shared state directory\n(LETTA_LOCAL_BACKEND_DIR for Letta Code's local backend)",
        },
        "sandbox-minute-ms": { type: "string", value: "<n>", help: "length of one TTL minute in ms (default 60000)" },
      },
    },
    {
      title: "Cluster (off unless --cluster is given; docs/relay-cluster.md):",
      options: {
        cluster: {
          type: "string",
          multiple: true,
          value: "<nats-url>",
          help: "run as one node of a cluster sharing its state in NATS\nJetStream at this server (repeatable, or comma-separated)",
        },
        "node-id": { type: "string", value: "<name>", help: "this node's name in leases and logs (default: random)" },
        "cluster-name": { type: "string", value: "<name>", help: "prefix of the key-value buckets (default toolrelay)" },
        "cluster-replicas": { type: "string", value: "<n>", help: "copies of each bucket: 1 (default), 3 or 5" },
        "lease-ttl-ms": { type: "string", value: "<n>", help: "environment lease TTL (default 3000)" },
        "advertise-address": {
          type: "string",
          value: "<host:port>",
          help: "where other nodes reach this one (default: --host and the port)",
        },
      },
    },
    {
      title: 'Bounds (each sets the relay option named beside it; defaults in docs/relay.md "Bounds"):',
      options: Object.fromEntries(
        Object.entries(BOUND_FLAGS).map(([flag, option]) => [flag, { type: "string" as const, value: "<n>", help: option }]),
      ),
    },
  ],
};

/** The sandbox flags besides `--sandbox-command`, which need it. */
const SANDBOX_DETAIL_FLAGS = Object.keys(RELAY_COMMAND.groups[1]!.options).filter((flag) => flag !== "sandbox-command");
/** The cluster flags besides `--cluster`, which need it. */
const CLUSTER_DETAIL_FLAGS = Object.keys(RELAY_COMMAND.groups[2]!.options).filter((flag) => flag !== "cluster");

/** Writes to stderr: warnings always (refusals, bounds hit, a lowered connection cap), the rest by `level`. */
function stderrLogger(io: CliIo, level: "warn" | "info" | "debug"): RelayLogger {
  const write = (message: string, details?: Record<string, unknown>): void =>
    io.stderr(details ? `[relay] ${message} ${JSON.stringify(details)}\n` : `[relay] ${message}\n`);
  const skip = (): void => {};
  return { debug: level === "debug" ? write : skip, info: level === "warn" ? skip : write, warn: write };
}

/** The relay options a parsed command line asks for. Throws {@link CliUsageError} for a value it cannot use. */
export function relayOptionsOf(args: CliArguments, io: CliIo = processIo): RelayOptions {
  const port = args.integer("port", { max: 65_535 }) ?? 0;
  const mode = args.text("listener-mode") ?? "paired";
  if (mode !== "paired" && mode !== "split" && mode !== "single")
    throw new CliUsageError("--listener-mode must be paired, split or single");
  const apiKeys = args.list("api-key");
  const tenants = new Map<string, { listener: string[]; sdk: string[] }>();
  for (const path of args.list("api-keys-file")) {
    const file = readApiKeysFile(path);
    apiKeys.push(...file.apiKeys);
    for (const [tenant, keys] of Object.entries(file.tenants)) {
      const merged = tenants.get(tenant) ?? { listener: [], sdk: [] };
      tenants.set(tenant, { listener: [...merged.listener, ...keys.listener], sdk: [...merged.sdk, ...keys.sdk] });
    }
  }
  const bounds: Partial<Record<(typeof BOUND_FLAGS)[keyof typeof BOUND_FLAGS], number>> = {};
  for (const [flag, option] of Object.entries(BOUND_FLAGS)) {
    const value = args.integer(flag);
    if (value !== undefined) bounds[option] = value;
  }
  const level = args.flag("debug") ? "debug" : args.flag("verbose") ? "info" : "warn";
  const sandbox = sandboxOf(args);
  const cluster = clusterOf(args);
  return {
    port,
    host: args.text("host") ?? "127.0.0.1",
    apiKeys,
    ...(tenants.size > 0 ? { tenants: Object.fromEntries(tenants) } : {}),
    listenerMode: mode satisfies ListenerMode,
    allowQueryToken: args.flag("allow-query-token"),
    ...(args.has("allowed-host") ? { allowedHosts: args.list("allowed-host") } : {}),
    enableTestHooks: args.flag("enable-test-hooks"),
    ...(args.flag("no-json-pongs") ? { respondToJsonPings: false } : {}),
    ...bounds,
    ...(sandbox ? { sandbox } : {}),
    ...(cluster ? { cluster } : {}),
    logger: stderrLogger(io, level),
  };
}

/** The `--cluster*` flags as cluster options (`undefined` without `--cluster`). */
function clusterOf(args: CliArguments): RelayClusterOptions | undefined {
  const servers = args.list("cluster").flatMap((entry) =>
    entry
      .split(",")
      .map((part) => part.trim())
      .filter((part) => part.length > 0),
  );
  if (servers.length === 0) {
    const stray = CLUSTER_DETAIL_FLAGS.find((flag) => args.has(flag));
    if (stray) throw new CliUsageError(`--${stray} needs --cluster`);
    return undefined;
  }
  const replicas = args.integer("cluster-replicas");
  if (replicas !== undefined && replicas !== 1 && replicas !== 3 && replicas !== 5)
    throw new CliUsageError("--cluster-replicas must be 1, 3 or 5");
  const nodeId = args.text("node-id");
  const name = args.text("cluster-name");
  const leaseTtlMs = args.integer("lease-ttl-ms");
  const advertiseAddress = args.text("advertise-address");
  return {
    servers,
    ...(nodeId !== undefined ? { nodeId } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(replicas !== undefined ? { replicas } : {}),
    ...(leaseTtlMs !== undefined ? { leaseTtlMs } : {}),
    ...(advertiseAddress !== undefined ? { advertiseAddress } : {}),
  };
}

/** The `--sandbox-*` flags as sandbox options (`undefined` without `--sandbox-command`). */
function sandboxOf(args: CliArguments): RelaySandboxOptions | undefined {
  const command = args.text("sandbox-command");
  if (command === undefined) {
    const stray = SANDBOX_DETAIL_FLAGS.find((flag) => args.has(flag));
    if (stray) throw new CliUsageError(`--${stray} needs --sandbox-command`);
    return undefined;
  }
  const env: Record<string, string> = {};
  for (const entry of args.list("sandbox-env")) {
    const at = entry.indexOf("=");
    if (at <= 0) throw new CliUsageError(`--sandbox-env must be NAME=VALUE (got ${JSON.stringify(entry.slice(0, 40))})`);
    env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  const isolation = args.text("sandbox-isolation");
  if (isolation !== undefined && isolation !== "namespace" && isolation !== "none")
    throw new CliUsageError("--sandbox-isolation must be namespace or none");
  const minute = args.text("sandbox-minute-ms");
  if (minute !== undefined && !/^\d+$/.test(minute)) throw new CliUsageError("--sandbox-minute-ms must be a positive integer");
  const directory = args.text("sandbox-dir");
  const sharedStateEnv = args.text("sandbox-shared-state-env");
  return {
    command,
    args: args.list("sandbox-arg"),
    env,
    readOnlyPaths: args.list("sandbox-read-only"),
    ...(isolation ? { isolation } : {}),
    ...(directory ? { directory } : {}),
    ...(sharedStateEnv ? { sharedStateEnv } : {}),
    ...(minute ? { minuteMs: Number(minute) } : {}),
  };
}

/**
 * Runs the CLI: starts the relay and prints its address. Resolves with the exit code (the
 * caller sets it on the process) and the running relay, if it started.
 */
export async function runRelayCli(
  argv: readonly string[],
  io: CliIo = processIo,
): Promise<{ exitCode: number; relay?: Relay | undefined }> {
  const outcome = await runCommand(
    RELAY_COMMAND,
    argv,
    async (args) => {
      const options = relayOptionsOf(args, io);
      const relay = await startRelay(options);
      io.stdout(`Relay listening on ${relay.httpUrl}\n`);
      const tenants = relay.stats().tenants.length;
      const keys = resolveRelayOptions(options).keys.size;
      io.stderr(
        `[relay] listener mode ${options.listenerMode}; ${keys === 0 ? "no API keys (loopback only, one tenant)" : `${keys} API key(s), ${tenants} tenant(s)`}\n`,
      );
      if (options.cluster)
        io.stderr(`[relay] cluster node ${options.cluster.nodeId ?? "(random id)"} at ${options.cluster.servers.join(", ")}\n`);
      if (options.sandbox)
        io.stderr(`[relay] sandboxes: ${options.sandbox.command} (isolation ${options.sandbox.isolation ?? "namespace"})\n`);
      return relay;
    },
    io,
  );
  return { exitCode: outcome.exitCode, ...(outcome.started ? { relay: outcome.started } : {}) };
}
