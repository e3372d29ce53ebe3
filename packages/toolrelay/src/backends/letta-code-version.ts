/**
 * Which Letta Code a local backend talks to. The app-server reports its version at
 * `GET /app-server-info` (docs/protocol.md#capability-discovery); a server older than the version
 * toolrelay is tested against is refused with `UNSUPPORTED_BACKEND`, naming the version found and
 * the one needed, before the session opens its link. A `letta` too old to have an app-server at
 * all (0.25.9, what `npm install -g @letta-ai/letta-code` picks on Node 20) exits on
 * `server --listen`; when a spawn fails that way, `letta --version` says why.
 */
import { spawn } from "node:child_process";
import { get as httpGet } from "node:http";
import { get as httpsGet } from "node:https";
import { ToolrelayError, isToolrelayError } from "../errors.js";
import { parseJson } from "../internal/safe-json.js";
import type { Timers } from "../internal/timers.js";
import type { SpawnLettaServerOptions, SpawnedLettaServer } from "./spawn-letta-server.js";

/** The oldest Letta Code toolrelay works with: the version it is tested against (`test/letta-peer`). */
export const MIN_LETTA_CODE_VERSION = "0.32.18";

/** How long `GET /app-server-info` may take (the server already listens); a server that does not answer in time is not judged. */
const PROBE_TIMEOUT_MS = 5_000;
/**
 * How long `letta --version` may take when the spawn's `startupTimeoutMs` is not given: as long as
 * a server start (the CLI loads the same bundle; 12 s was seen for 0.25.9 on a loaded 2-core machine).
 */
const VERSION_COMMAND_TIMEOUT_MS = 30_000;
/** An `app_server_info_response` is a few hundred characters; a longer answer is not one. */
const MAX_INFO_CHARS = 64 * 1024;

const UPGRADE_HINT =
  "Letta Code 0.32 needs Node 22.19 or later; on an older Node, npm installs 0.25.9. " +
  "Install it with a Node 22 of its own: docs/getting-started.md, step 0";

/** `-1`, `0` or `1` as `left` is older than, the same as or newer than `right`; `undefined` when either is not `x.y.z[-pre]`. */
export function compareVersions(left: string, right: string): -1 | 0 | 1 | undefined {
  const a = parseVersion(left);
  const b = parseVersion(right);
  if (a === undefined || b === undefined) return undefined;
  for (let index = 0; index < 3; index += 1) {
    if (a.numbers[index]! !== b.numbers[index]!) return a.numbers[index]! < b.numbers[index]! ? -1 : 1;
  }
  if (a.prerelease === b.prerelease) return 0;
  if (a.prerelease === undefined) return 1; // 1.0.0 is newer than 1.0.0-beta
  if (b.prerelease === undefined) return -1;
  return a.prerelease < b.prerelease ? -1 : 1;
}

/** The version in what `letta --version` prints (`0.25.9 (Letta Code)` → `0.25.9`), if it printed one. */
export function versionOfLettaCode(output: string): string | undefined {
  return /^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?) \(Letta Code\)\s*$/m.exec(output)?.[1];
}

function parseVersion(text: string): { numbers: [number, number, number]; prerelease: string | undefined } | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/.exec(text.trim());
  if (!match) return undefined;
  return { numbers: [Number(match[1]), Number(match[2]), Number(match[3])], prerelease: match[4] };
}

/** `UNSUPPORTED_BACKEND` for a Letta Code older than {@link MIN_LETTA_CODE_VERSION}; `details: { found, needed }`. */
export function lettaCodeTooOld(found: string, where: string, cause?: unknown): ToolrelayError {
  return new ToolrelayError(
    "UNSUPPORTED_BACKEND",
    `${where} is Letta Code ${found}, too old: toolrelay needs Letta Code ${MIN_LETTA_CODE_VERSION} or later. ${UPGRADE_HINT}.`,
    { cause, details: { found, needed: MIN_LETTA_CODE_VERSION } },
  );
}

/**
 * The `letta_code_version` an app-server reports at `GET /app-server-info`, or `undefined` when it
 * says none: no answer within the probe's deadline, refused, not JSON, no version (a server that
 * is not an app-server, a proxy, wrong credentials — the link reports those itself).
 */
export async function readAppServerVersion(url: string, headers: Record<string, string>, timers: Timers): Promise<string | undefined> {
  let infoUrl: URL;
  try {
    infoUrl = new URL(url);
    infoUrl.protocol = infoUrl.protocol === "wss:" || infoUrl.protocol === "https:" ? "https:" : "http:";
    infoUrl = new URL("/app-server-info", infoUrl);
  } catch {
    return undefined; // the link refuses a bad URL with INVALID_OPTIONS
  }
  const body = await new Promise<string | undefined>((resolve) => {
    // A connection of its own, closed after the answer (`agent: false`): nothing of the probe stays
    // open beside the session's socket.
    const request = (infoUrl.protocol === "https:" ? httpsGet : httpGet)(infoUrl, { headers, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        resolve(undefined);
        return;
      }
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
        if (text.length > MAX_INFO_CHARS) request.destroy();
      });
      response.on("end", () => resolve(text));
      response.on("error", () => resolve(undefined));
    });
    request.on("error", () => resolve(undefined));
    request.on("close", () => resolve(undefined));
    const deadline = timers.setTimeout(() => request.destroy(), PROBE_TIMEOUT_MS);
    request.on("close", () => timers.clearTimeout(deadline));
  });
  const info = body === undefined ? undefined : parseJson(body);
  const version = info?.ok ? (info.value as { letta_code_version?: unknown } | null)?.letta_code_version : undefined;
  return typeof version === "string" ? version : undefined;
}

/**
 * Refuse an app-server older than {@link MIN_LETTA_CODE_VERSION} (`UNSUPPORTED_BACKEND`); a
 * server that reports no version is not judged. The `server` the session started is stopped first.
 */
export async function checkAppServerVersion(
  url: string,
  options: { token?: string | undefined; headers?: Record<string, string> | undefined },
  timers: Timers,
  server?: SpawnedLettaServer,
): Promise<void> {
  const headers = { ...options.headers, ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) };
  const found = await readAppServerVersion(url, headers, timers);
  if (found === undefined || compareVersions(found, MIN_LETTA_CODE_VERSION) !== -1) return;
  await server?.stop();
  throw lettaCodeTooOld(found, server ? "The spawned server" : `The app-server at ${url}`);
}

/**
 * For `spawnLettaServer(...).catch(...)`: when the server could not start, ask the same command
 * for `--version`; a Letta Code older than {@link MIN_LETTA_CODE_VERSION} becomes
 * `UNSUPPORTED_BACKEND` (the spawn's error as its `cause`), anything else is rethrown as it was.
 */
export function explainSpawnFailure(options: SpawnLettaServerOptions, timers: Timers): (error: unknown) => Promise<never> {
  return async (error) => {
    if (!isToolrelayError(error, "SPAWN_FAILED")) throw error;
    const command = options.command ?? "letta";
    const found = versionOfLettaCode(await commandOutput(command, [...(options.commandArgs ?? []), "--version"], options, timers));
    if (found === undefined || compareVersions(found, MIN_LETTA_CODE_VERSION) !== -1) throw error;
    throw lettaCodeTooOld(found, `\`${command}\``, error);
  };
}

/** What `command args` prints (stdout and stderr) before it exits or its deadline passes; "" if it cannot start. */
function commandOutput(command: string, args: string[], options: SpawnLettaServerOptions, timers: Timers): Promise<string> {
  return new Promise((resolve) => {
    let output = "";
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ["ignore", "pipe", "pipe"] });
    const deadline = timers.setTimeout(() => child.kill("SIGKILL"), options.startupTimeoutMs ?? VERSION_COMMAND_TIMEOUT_MS);
    const collect = (chunk: Buffer) => {
      if (output.length < 4_096) output += chunk.toString();
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    child.once("error", () => {
      timers.clearTimeout(deadline);
      resolve("");
    });
    child.once("close", () => {
      timers.clearTimeout(deadline);
      resolve(output);
    });
  });
}
