/**
 * The connection cap against the open-file limit (docs/relay.md "Connections and the open-file
 * limit"): the limit read from `/proc/self/limits`, a chosen cap that does not fit refused with
 * both numbers and the option to lower, the default lowered to what fits with a warning. The
 * last two run the real CLI in a shell whose `ulimit -n` is low.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { platform } from "node:os";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  BASE_DESCRIPTOR_HEADROOM,
  descriptorHeadroom,
  fitConnectionCap,
  parseOpenFileLimit,
  readOpenFileLimit,
} from "../../packages/relay/src/open-file-limit.js";
import { resolveRelayOptions } from "../../packages/relay/src/resolve-relay-options.js";
import { recordingLogger } from "./support/relay-fixture.js";

const BIN = fileURLToPath(new URL("../../packages/relay/src/bin.ts", import.meta.url));

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max processes             63448                63448                processes
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
`;

describe("reading the limit", () => {
  it("takes the soft limit of the Max open files row; unlimited, a missing row or no /proc is undefined", () => {
    expect(parseOpenFileLimit(LIMITS)).toBe(1024);
    expect(parseOpenFileLimit(LIMITS.replace("1024                 524288", "unlimited            unlimited"))).toBeUndefined();
    expect(parseOpenFileLimit("Limit Soft Limit Hard Limit Units\n")).toBeUndefined();
    expect(readOpenFileLimit("/proc/self/no-such-file")).toBeUndefined();
    if (platform() === "linux") expect(readOpenFileLimit()).toEqual(expect.any(Number));
  });

  it("keeps 64 descriptors for the rest, and 4 per sandbox the tenants may run", () => {
    expect(descriptorHeadroom(resolveRelayOptions({}))).toBe(BASE_DESCRIPTOR_HEADROOM);
    const sandboxed = resolveRelayOptions({
      tenants: { a: ["key-a-0123"], b: ["key-b-0123"] },
      maxSandboxesPerTenant: 3,
      sandbox: { command: "/bin/true" },
    });
    expect(descriptorHeadroom(sandboxed)).toBe(64 + 4 * 3 * 2);
  });
});

describe("fitting the cap", () => {
  it("a cap that fits is kept; an unknown limit is not checked (said at debug level)", () => {
    const logger = recordingLogger();
    expect(fitConnectionCap({ maxConnections: 960, chosen: true, headroom: 64, openFileLimit: 1024, logger })).toBe(960);
    expect(fitConnectionCap({ maxConnections: 4096, chosen: false, headroom: 64, openFileLimit: undefined, logger })).toBe(4096);
    expect(logger.lines).toEqual([
      'debug relay: the open-file limit is unknown (no /proc/self/limits); maxConnections is not checked against it {"maxConnections":4096}',
    ]);
  });

  it("a chosen cap that does not fit is refused, naming both numbers and the option; the default is lowered with a warning", () => {
    const logger = recordingLogger();
    expect(() => fitConnectionCap({ maxConnections: 961, chosen: true, headroom: 64, openFileLimit: 1024, logger })).toThrow(
      expect.objectContaining({
        code: "INVALID_OPTIONS",
        message:
          "relay: maxConnections 961 plus 64 descriptors for everything else is more than this process's open-file limit 1024; lower maxConnections (--max-connections) to at most 960, or raise the limit (ulimit -n, systemd LimitNOFILE=)",
      }),
    );
    expect(fitConnectionCap({ maxConnections: 4096, chosen: false, headroom: 64, openFileLimit: 1024, logger })).toBe(960);
    expect(logger.lines).toEqual([
      'warn relay: maxConnections lowered from its default 4096 to 960 to fit the open-file limit {"openFileLimit":1024,"headroom":64}',
    ]);
    expect(() => fitConnectionCap({ maxConnections: 4096, chosen: false, headroom: 64, openFileLimit: 65, logger })).toThrow(
      "relay: maxConnections 4096 plus 64 descriptors for everything else is more than this process's open-file limit 65; raise the limit (ulimit -n, systemd LimitNOFILE=)",
    );
  });
});

/** Runs the relay CLI under `ulimit -n <limit>`; resolves when it exits or prints its address (then stops it). */
function cliUnderLimit(limit: number, args: string[]): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  const quoted = [process.execPath, "--import", "tsx", BIN, ...args].map((word) => `'${word}'`).join(" ");
  const child = spawn("sh", ["-c", `ulimit -n ${limit} && exec ${quoted}`], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    if (/Relay listening on/.test(stdout)) child.kill("SIGTERM");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  return new Promise((resolve) =>
    child.on("exit", (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, stdout, stderr });
    }),
  );
}

describe.runIf(platform() === "linux")("the CLI under a low ulimit -n", () => {
  it("--max-connections over the limit: exit 1 naming both numbers and the flag; the relay never listens (docs/relay.md quotes the text)", async () => {
    const run = await cliUnderLimit(512, ["--max-connections", "4096"]);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toBe("");
    const text =
      "toolrelay-relay: relay: maxConnections 4096 plus 64 descriptors for everything else is more than this process's open-file limit 512; lower maxConnections (--max-connections) to at most 448, or raise the limit (ulimit -n, systemd LimitNOFILE=)";
    expect(run.stderr).toContain(text);
    const page = readFileSync(new URL("../../docs/relay.md", import.meta.url), "utf8");
    expect(page).toContain(`\`${text}\``);
    expect(page).toContain("`relay: maxConnections lowered from its default 4096 to 448 to fit the open-file limit`");
  }, 30_000);

  it("the default cap over the limit: it starts with the cap lowered, says so on stderr, and a SIGTERM right after its address stops it with 0", async () => {
    const run = await cliUnderLimit(512, []);
    expect(run.stdout).toMatch(/^Relay listening on http:\/\/127\.0\.0\.1:\d+\n$/);
    expect(run.stderr).toContain(
      '[relay] relay: maxConnections lowered from its default 4096 to 448 to fit the open-file limit {"openFileLimit":512,"headroom":64}',
    );
    expect(run.exitCode).toBe(0);
  }, 30_000);
});
