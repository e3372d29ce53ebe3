/**
 * A sandbox command for the relay's own tests: a tiny Node program (written to a temp folder)
 * that prints what it sees — its environment, cwd, arguments, whether a canary file exists, and
 * whether it may write its workspace — as one `PROBE <json>` line, then stays alive until SIGTERM.
 * It exits by itself with code 3 once a file `exit-<its device id>` appears in its folder. The
 * real listener is the sandbox command of the integration suites; here the relay's process
 * handling (environment, isolation, reaping) is what is under test.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { RelaySandboxOptions } from "../../../packages/relay/src/index.js";

const PROBE_SOURCE = String.raw`
const fs = require("node:fs");
const path = require("node:path");
const canary = process.argv[2];
let writable = false;
try { fs.writeFileSync(path.join(process.cwd(), "probe.txt"), "x"); writable = true; } catch {}
const seen = {
  env: process.env,
  cwd: process.cwd(),
  argv: process.argv.slice(2),
  canaryVisible: fs.existsSync(canary),
  workspaceWritable: writable,
  rootEntries: fs.readdirSync("/").sort(),
};
process.stdout.write("PROBE " + JSON.stringify(seen) + "\n");
const flag = path.join(__dirname, "exit-" + process.env.LETTA_LISTENER_DEVICE_ID);
const timer = setInterval(() => { if (fs.existsSync(flag)) process.exit(3); }, 25);
process.on("SIGTERM", () => { clearInterval(timer); process.exit(0); });
`;

export interface SandboxProbe {
  /** The folder holding the probe (read-only in a namespace sandbox). */
  folder: string;
  /** A file the probe checks for; the test process can read it, a sandbox must not. */
  canary: string;
  options(extra?: Partial<RelaySandboxOptions>): RelaySandboxOptions;
  /** Makes the probe of `deviceId` exit with code 3. */
  exit(deviceId: string): void;
  remove(): void;
}

export function createSandboxProbe(): SandboxProbe {
  const folder = realpathSync(mkdtempSync(join(tmpdir(), "toolrelay-probe-")));
  const script = join(folder, "probe.cjs");
  writeFileSync(script, PROBE_SOURCE);
  const callerFolder = realpathSync(mkdtempSync(join(tmpdir(), "toolrelay-probe-caller-")));
  const canary = join(callerFolder, "canary.txt");
  writeFileSync(canary, "caller's secret\n");
  return {
    folder,
    canary,
    options: (extra = {}) => ({
      command: realpathSync(process.execPath),
      args: [script, canary],
      env: { PROBE_CONFIGURED: "yes" },
      // The folder, and this Node's install (under /usr here, elsewhere on some machines).
      readOnlyPaths: [folder, dirname(dirname(realpathSync(process.execPath)))],
      ...extra,
    }),
    exit: (deviceId) => writeFileSync(join(folder, `exit-${deviceId}`), ""),
    remove: () => {
      rmSync(folder, { recursive: true, force: true });
      rmSync(callerFolder, { recursive: true, force: true });
    },
  };
}

/** The `PROBE` line of a sandbox's output, parsed. */
export function probeReport(
  output: readonly string[],
):
  | { env: Record<string, string>; cwd: string; argv: string[]; canaryVisible: boolean; workspaceWritable: boolean; rootEntries: string[] }
  | undefined {
  const line = output.find((entry) => entry.startsWith("PROBE "));
  return line ? JSON.parse(line.slice("PROBE ".length)) : undefined;
}
