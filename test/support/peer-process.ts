/**
 * Spawning the real Letta Code CLI (test/letta-peer) as a child process that tests can always
 * clean up: a fresh temporary HOME per process, its own process group, a stop() that escalates
 * SIGTERM → SIGKILL, and two safety nets for a test process that dies without calling stop()
 * (an `exit` hook, and a detached reaper that kills the group once the parent pid is gone).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** Folder holding the peer's package.json, lockfile and node_modules. */
export const LETTA_PEER_DIR = fileURLToPath(new URL("../letta-peer/", import.meta.url));
/** The Node 22 binary the CLI needs (npm package `node`). */
export const LETTA_NODE_BINARY = join(LETTA_PEER_DIR, "node_modules", "node", "bin", "node");
/** The CLI bundle. */
export const LETTA_CLI = join(LETTA_PEER_DIR, "node_modules", "@letta-ai", "letta-code", "letta.js");

/** Environment every peer process gets (plus HOME and the caller's additions). */
export const LETTA_BASE_ENV: Readonly<Record<string, string>> = {
  LETTA_LOCAL_BACKEND_EXPERIMENTAL: "1",
  LETTA_CODE_TELEM: "0",
  DO_NOT_TRACK: "1",
  DISABLE_AUTOUPDATER: "1",
  NO_COLOR: "1",
};

export interface PeerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface PeerProcess {
  readonly pid: number;
  /** The temporary HOME (removed by stop()). */
  readonly home: string;
  /** Every complete stdout line so far (live array). */
  readonly stdoutLines: string[];
  /** Every complete stderr line so far (live array). */
  readonly stderrLines: string[];
  /** Resolves when the process has exited. */
  readonly exited: Promise<PeerExit>;
  /** Whether the process has exited. */
  hasExited(): boolean;
  /** Both streams, for error messages. */
  output(): string;
  /**
   * Resolves with the `occurrence`-th line (default 1st; stdout or stderr) matching `pattern`,
   * counting lines already seen. Default deadline 30 s; rejects early if the process exits.
   */
  waitForLine(pattern: RegExp, options?: WaitForLineOptions): Promise<RegExpMatchArray>;
  /** SIGTERM to the process group, SIGKILL after `graceMs` (default 1000), waits for exit, removes HOME. */
  stop(options?: { graceMs?: number }): Promise<void>;
}

export interface WaitForLineOptions {
  /** Default 30 000 ms. */
  timeoutMs?: number;
  /** Used in the error message. Default: the pattern. */
  description?: string;
  /** Which matching line to wait for, 1-based, counting lines already printed. Default 1. */
  occurrence?: number;
}

export interface SpawnPeerOptions {
  args: string[];
  /** Added to the base environment (after HOME; may override anything). */
  env?: Record<string, string>;
  /** Label for error messages, e.g. "letta app-server". */
  label: string;
  /** Extra environment inherited from the test process. Default: PATH, LANG, TMPDIR only. */
  inheritEnv?: string[];
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of live) if (child.pid) killGroup(child.pid, "SIGKILL");
  });
}

/**
 * Plain-Node reaper: when the parent pid disappears, SIGKILLs the child's process group and
 * removes its temporary HOME; exits on its own once the child is gone.
 */
const REAPER_SOURCE = `// toolrelay-peer-reaper
const { rmSync } = require("node:fs");
const [parent, child] = process.argv.slice(1, 3).map(Number);
const home = process.argv[3];
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch (e) { return e.code === "EPERM"; } };
const timer = setInterval(() => {
  if (!alive(child)) process.exit(0);
  if (!alive(parent)) {
    clearInterval(timer);
    try { process.kill(-child, "SIGKILL"); } catch { try { process.kill(child, "SIGKILL"); } catch {} }
    const deadline = Date.now() + 3000;
    const finish = () => {
      if (alive(child) && Date.now() < deadline) return setTimeout(finish, 50);
      try { rmSync(home, { recursive: true, force: true }); } catch {}
      process.exit(0);
    };
    finish();
  }
}, 500);
`;

function startReaper(childPid: number, home: string): ChildProcess {
  const reaper = spawn(process.execPath, ["-e", REAPER_SOURCE, String(process.pid), String(childPid), home], {
    detached: true,
    stdio: "ignore",
  });
  reaper.unref();
  return reaper;
}

export function assertPeerInstalled(): void {
  for (const file of [LETTA_NODE_BINARY, LETTA_CLI]) {
    if (!existsSync(file)) {
      throw new Error(`The real Letta Code peer is not installed (${file} is missing). Run: node scripts/ensure-letta-peer.mjs`);
    }
  }
}

export function spawnPeerProcess(options: SpawnPeerOptions): PeerProcess {
  assertPeerInstalled();
  installExitHook();
  const home = mkdtempSync(join(tmpdir(), "toolrelay-letta-home-"));
  const inherited: Record<string, string> = {};
  for (const name of ["PATH", "LANG", "TMPDIR", ...(options.inheritEnv ?? [])]) {
    const value = process.env[name];
    if (value !== undefined) inherited[name] = value;
  }
  const child = spawn(LETTA_NODE_BINARY, [LETTA_CLI, ...options.args], {
    cwd: home,
    env: { ...inherited, HOME: home, ...LETTA_BASE_ENV, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  if (child.pid === undefined) {
    rmSync(home, { recursive: true, force: true });
    throw new Error(`${options.label}: spawn failed`);
  }
  const pid = child.pid;
  live.add(child);
  const reaper = startReaper(pid, home);

  const stdoutLines: string[] = [];
  const stderrLines: string[] = [];
  const lineListeners = new Set<(line: string) => void>();
  const collect = (stream: NodeJS.ReadableStream, lines: string[]) => {
    let partial = "";
    stream.setEncoding("utf8");
    stream.on("data", (text: string) => {
      partial += text;
      const parts = partial.split(/\r?\n/);
      partial = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        for (const listener of [...lineListeners]) listener(line);
      }
    });
    stream.on("end", () => {
      if (partial.length > 0) {
        lines.push(partial);
        for (const listener of [...lineListeners]) listener(partial);
        partial = "";
      }
    });
  };
  collect(child.stdout!, stdoutLines);
  collect(child.stderr!, stderrLines);

  let exitInfo: PeerExit | undefined;
  const exited = new Promise<PeerExit>((resolve) => {
    child.once("exit", (code, signal) => {
      exitInfo = { code, signal };
      live.delete(child);
      if (reaper.pid) killGroup(reaper.pid, "SIGKILL");
      resolve(exitInfo);
    });
  });

  const output = () => `--- stdout ---\n${stdoutLines.join("\n")}\n--- stderr ---\n${stderrLines.join("\n")}`;

  let stopping: Promise<void> | undefined;

  return {
    pid,
    home,
    stdoutLines,
    stderrLines,
    exited,
    hasExited: () => exitInfo !== undefined,
    output,
    waitForLine(pattern, waitOptions = {}) {
      const timeoutMs = waitOptions.timeoutMs ?? 30_000;
      const description = waitOptions.description ?? String(pattern);
      let remaining = waitOptions.occurrence ?? 1;
      for (const line of [...stdoutLines, ...stderrLines]) {
        const match = line.match(pattern);
        if (match && --remaining === 0) return Promise.resolve(match);
      }
      return new Promise<RegExpMatchArray>((resolve, reject) => {
        const finish = (error: Error | undefined, match?: RegExpMatchArray) => {
          clearTimeout(timer);
          lineListeners.delete(onLine);
          if (error) reject(error);
          else resolve(match!);
        };
        const onLine = (line: string) => {
          const match = line.match(pattern);
          if (match && --remaining === 0) finish(undefined, match);
        };
        const timer = setTimeout(
          () => finish(new Error(`${options.label}: no ${description} within ${timeoutMs} ms\n${output()}`)),
          timeoutMs,
        );
        lineListeners.add(onLine);
        exited.then((info) => {
          // Let the streams flush their last lines first (only while this wait is still open).
          if (!lineListeners.has(onLine)) return;
          setTimeout(() => {
            if (!lineListeners.has(onLine)) return;
            finish(new Error(`${options.label}: exited (code ${info.code}, signal ${info.signal}) before ${description}\n${output()}`));
          }, 50);
        });
      });
    },
    stop(stopOptions = {}) {
      stopping ??= (async () => {
        const graceMs = stopOptions.graceMs ?? 1000;
        if (!exitInfo) {
          killGroup(pid, "SIGTERM");
          let graceTimer: NodeJS.Timeout | undefined;
          const gone = await Promise.race([
            exited.then(() => true),
            new Promise<boolean>((resolve) => (graceTimer = setTimeout(() => resolve(false), graceMs))),
          ]);
          clearTimeout(graceTimer);
          if (!gone) killGroup(pid, "SIGKILL");
          await exited;
        }
        // Children of the CLI (if any) share its process group.
        killGroup(pid, "SIGKILL");
        rmSync(home, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 });
      })();
      return stopping;
    },
  };
}
