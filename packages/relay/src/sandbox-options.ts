/**
 * How the relay starts a sandbox: an explicit command (there is no default binary), its
 * arguments and its environment, the isolation it runs in, and where its directories live.
 * {@link resolveSandboxOptions} checks them at start, so a relay that cannot run sandboxes says
 * so before it listens. See docs/relay.md "Sandboxes".
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, realpathSync } from "node:fs";
import { isAbsolute } from "node:path";
import { ToolrelayError } from "toolrelay/protocol";

/** `"namespace"`: own user, mount and PID namespaces; `"none"`: a plain child process. */
export type SandboxIsolation = "namespace" | "none";

/** How the relay starts sandboxes (`sandbox` option; `--sandbox-*` flags). */
export interface RelaySandboxOptions {
  /**
   * The listener executable, an absolute path (e.g. Node, with `letta.js` as the first of `args`,
   * or a `letta` binary). Required: the relay never falls back to a default binary.
   */
  command: string;
  /**
   * Arguments, e.g. `["/…/letta.js", "server", "--debug"]`. The relay appends
   * `--env-name <connectionName>`. Default `[]`.
   */
  args?: readonly string[] | undefined;
  /**
   * The sandbox's environment, e.g. `{ PATH, LLAMA_CPP_BASE_URL, LETTA_LOCAL_BACKEND_EXPERIMENTAL }`.
   * Nothing of the relay's own environment is passed on; the relay adds only what the listener
   * needs: `HOME`, `TMPDIR`, `LETTA_BASE_URL` (the relay), `LETTA_API_KEY` (a key of this
   * sandbox alone), `LETTA_LISTENER_DEVICE_ID`, `IGNORE_SELF_HOSTED_LISTENER_ERROR=1` and
   * `sharedStateEnv`. Default `{}`.
   */
  env?: Readonly<Record<string, string>> | undefined;
  /**
   * `"namespace"`: each sandbox runs in its own user, mount and PID namespaces (util-linux
   * `unshare`), where the filesystem holds only the system directories (`/usr`, `/etc`, `/bin`,
   * `/lib`, `/lib64`, `/sbin`, read-only), `readOnlyPaths`, its own directory and its shared
   * state — not the relay's or anyone else's files. `"none"`: a plain child process that can read
   * whatever the relay's user can. Default `"namespace"` (the relay refuses to start when
   * `unshare` cannot create the namespaces).
   */
  isolation?: SandboxIsolation | undefined;
  /** What the listener needs besides the system directories (its install), read-only. Default `[]`. */
  readOnlyPaths?: readonly string[] | undefined;
  /** Where the sandboxes' directories are made. Default: a fresh directory in the OS temp dir, removed when the relay closes. */
  directory?: string | undefined;
  /**
   * An environment variable that names a directory shared by all sandboxes of one tenant and kept
   * when they are reaped: the part of Letta Cloud that outlives a sandbox (agents and
   * conversations). For Letta Code's local backend: `"LETTA_LOCAL_BACKEND_DIR"`. Default: none.
   */
  sharedStateEnv?: string | undefined;
  /** The length of one TTL minute, in ms (tests shorten it). Default 60_000. */
  minuteMs?: number | undefined;
  /** Output lines kept per sandbox for the `/_relay/sandboxes` test hook. Default 200. */
  outputLines?: number | undefined;
}

/** {@link RelaySandboxOptions} checked, with every default applied. */
export interface ResolvedSandboxOptions {
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  isolation: SandboxIsolation;
  readOnlyPaths: readonly string[];
  directory: string | undefined;
  sharedStateEnv: string | undefined;
  minuteMs: number;
  outputLines: number;
}

/**
 * Variables the relay sets itself (or a shell would), so configuring one is refused: no sandbox
 * is misled about who it is or where it runs.
 */
export const RELAY_SET_ENV = [
  "PWD",
  "OLDPWD",
  "HOME",
  "TMPDIR",
  "LETTA_BASE_URL",
  "LETTA_API_KEY",
  "LETTA_LISTENER_DEVICE_ID",
  "IGNORE_SELF_HOSTED_LISTENER_ERROR",
] as const;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function invalid(message: string): ToolrelayError {
  return new ToolrelayError("INVALID_OPTIONS", `relay: sandbox.${message}`);
}

export function resolveSandboxOptions(options: RelaySandboxOptions): ResolvedSandboxOptions {
  if (typeof options?.command !== "string" || !isAbsolute(options.command)) {
    throw invalid("command must be the absolute path of the listener executable (there is no default)");
  }
  try {
    accessSync(options.command, constants.X_OK);
  } catch {
    throw invalid(`command ${options.command} is not an executable file`);
  }
  const args = [...(options.args ?? [])];
  if (!args.every((arg) => typeof arg === "string")) throw invalid("args must be strings");
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (!ENV_NAME.test(name) || typeof value !== "string" || value.includes("\0"))
      throw invalid(`env ${JSON.stringify(name)} must be a variable name with a string value`);
    if ((RELAY_SET_ENV as readonly string[]).includes(name) || name === options.sharedStateEnv)
      throw invalid(`env ${name} is set by the relay for each sandbox`);
    env[name] = value;
  }
  if (options.sharedStateEnv !== undefined && !ENV_NAME.test(options.sharedStateEnv))
    throw invalid("sharedStateEnv must be a variable name");
  const isolation = options.isolation ?? "namespace";
  if (isolation !== "namespace" && isolation !== "none") throw invalid('isolation must be "namespace" or "none"');
  const readOnlyPaths = (options.readOnlyPaths ?? []).map((path) => {
    if (typeof path !== "string" || !isAbsolute(path) || !existsSync(path))
      throw invalid(`readOnlyPaths: ${String(path)} must be an existing absolute path`);
    return path;
  });
  if (options.directory !== undefined && (!isAbsolute(options.directory) || !existsSync(options.directory))) {
    throw invalid("directory must be an existing absolute path");
  }
  const minuteMs = options.minuteMs ?? 60_000;
  if (!Number.isInteger(minuteMs) || minuteMs < 1) throw invalid("minuteMs must be an integer >= 1");
  const outputLines = options.outputLines ?? 200;
  if (!Number.isInteger(outputLines) || outputLines < 0) throw invalid("outputLines must be an integer >= 0");
  if (isolation === "namespace") checkNamespaces();
  return {
    command: options.command,
    args,
    env,
    isolation,
    readOnlyPaths,
    directory: options.directory === undefined ? undefined : realpathSync(options.directory),
    sharedStateEnv: options.sharedStateEnv,
    minuteMs,
    outputLines,
  };
}

/** `unshare` must be able to make the namespaces here (Linux, util-linux, user namespaces allowed). */
function checkNamespaces(): void {
  const probe = spawnSync("unshare", ["--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child", "true"], {
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 10_000,
  });
  if (probe.status === 0) return;
  const why = probe.error ? probe.error.message : probe.stderr?.toString().trim() || `exit ${probe.status}`;
  throw invalid(
    `isolation "namespace" needs util-linux unshare with user, mount and PID namespaces, which failed here (${why}); ` +
      'use isolation "none" only where a sandbox may read the relay\'s files',
  );
}
