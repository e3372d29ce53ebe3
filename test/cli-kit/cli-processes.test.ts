/**
 * The three executables as a user runs them (real processes through tsx): `-h`, `--help`,
 * `--version`, an unknown option, a port in use, and the one API keys file both servers read.
 */
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { usageText } from "@toolrelay/cli-kit";
import { startScriptedRuntime, type ScriptedRuntime } from "toolrelay/testing";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RELAY_COMMAND } from "../../packages/relay/src/cli.js";
import { OPENAI_COMMAND } from "../../packages/toolrelay/src/openai/cli.js";
import { SIDECAR_COMMAND } from "../../packages/toolrelay/src/sidecar/cli.js";
import { type CliName, killCliProcesses, runCli, startCli } from "../support/cli-process.js";

const folder = mkdtempSync(join(tmpdir(), "cli-processes-"));
const closers: (() => unknown)[] = [];
afterEach(async () => {
  killCliProcesses();
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Each test starts real processes through tsx: seconds each on a loaded two-core machine. */
const PROCESS_TEST = { timeout: 90_000 };

function versionOf(manifest: string): string {
  return (JSON.parse(readFileSync(new URL(manifest, import.meta.url), "utf8")) as { version: string }).version;
}

/** Each executable: its command, its package's version, and the stream `--help` prints on (the sidecar's stdout is for frames). */
const CLIS = [
  { name: "toolrelay-relay", command: RELAY_COMMAND, manifest: "../../packages/relay/package.json", helpOn: "stdout" },
  { name: "toolrelay-openai", command: OPENAI_COMMAND, manifest: "../../packages/toolrelay/package.json", helpOn: "stdout" },
  { name: "toolrelay-sidecar", command: SIDECAR_COMMAND, manifest: "../../packages/toolrelay/package.json", helpOn: "stderr" },
] as const satisfies readonly { name: CliName; helpOn: "stdout" | "stderr"; manifest: string; command: unknown }[];

describe.each(CLIS)("$name", PROCESS_TEST, ({ name, command, manifest, helpOn }) => {
  const other = helpOn === "stdout" ? "stderr" : "stdout";

  it("-h and --help print the usage and exit 0; --version prints the package's version and exits 0", async () => {
    const [short, long, version] = await Promise.all([runCli(name, ["-h"]), runCli(name, ["--help"]), runCli(name, ["--version"])]);
    for (const run of [short, long]) {
      expect(run.exitCode).toBe(0);
      expect(run[helpOn]).toBe(usageText(command));
      expect(run[helpOn]).toMatch(new RegExp(`^Usage: ${name} `));
      expect(run[other]).toBe("");
    }
    expect(version.exitCode).toBe(0);
    expect(version[helpOn]).toBe(`${versionOf(manifest)}\n`);
    expect(version[other]).toBe("");
  });

  it("an unknown option is a usage error: exit 2, the message names it, then the usage", async () => {
    const run = await runCli(name, ["--colour", "blue"]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toBe(`${name}: Unknown option '--colour'\n\n${usageText(command)}`);
    expect(run.stdout).toBe("");
  });
});

/** A port some other server holds. */
async function portInUse(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return (server.address() as { port: number }).port;
}

async function scriptedRuntime(): Promise<ScriptedRuntime> {
  const runtime = await startScriptedRuntime({ script: async (turn) => void (await turn.say("hi")) });
  closers.push(() => runtime.close());
  return runtime;
}

describe("a port in use", PROCESS_TEST, () => {
  it("toolrelay-relay exits 1 with the OS reason and the address", async () => {
    const port = await portInUse();
    const run = await runCli("toolrelay-relay", ["--port", String(port)]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toBe(
      `toolrelay-relay: relay: cannot listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`,
    );
  });

  it("toolrelay-openai exits 1 with the OS reason and the address", async () => {
    const [port, runtime] = await Promise.all([portInUse(), scriptedRuntime()]);
    const run = await runCli("toolrelay-openai", ["--local-url", runtime.url, "--agent-id", "agent-1", "--port", String(port)]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toBe(
      `toolrelay-openai: the bridge cannot listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`,
    );
  });
});

describe("the API keys file", PROCESS_TEST, () => {
  it("the relay and the bridge read the same file: <key>, <tenant> <key> and <tenant> listener|sdk <key> lines are accepted keys of both (roles are the relay's)", async () => {
    const file = join(folder, "keys");
    writeFileSync(
      file,
      "# shared keys\nsk-solo-key\nteam-a  sk-team-a-key\nteam-a sdk sk-team-a-app\nteam-a listener sk-team-a-listener\n",
    );
    const runtime = await scriptedRuntime();
    const relay = startCli("toolrelay-relay", ["--api-keys-file", file]);
    const bridge = startCli("toolrelay-openai", ["--local-url", runtime.url, "--agent-id", "agent-1", "--api-keys-file", file]);
    const [, relayUrl] = await relay.waitForStdout(/Relay listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const [, bridgeUrl] = await bridge.waitForStdout(/OpenAI bridge listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/);
    const status = async (url: string, key?: string) =>
      (await fetch(url, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } })).status;
    for (const key of ["sk-solo-key", "sk-team-a-key", "sk-team-a-app", "sk-team-a-listener"]) {
      // Listing environments is an SDK key's: the listener-only key gets 403, never 401.
      expect(await status(`${relayUrl}/v1/environments`, key), `relay, ${key}`).toBe(key === "sk-team-a-listener" ? 403 : 200);
      expect(await status(`${bridgeUrl}/models`, key), `bridge, ${key}`).toBe(200);
    }
    expect(await status(`${relayUrl}/v1/environments`, "team-a")).toBe(401);
    expect(await status(`${bridgeUrl}/models`, "team-a")).toBe(401);
    expect(await status(`${bridgeUrl}/models`)).toBe(401);
    expect(relay.stderr()).toContain("4 API key(s), 2 tenant(s)");
    expect(relay.stderr()).toContain("tenant team-a has keys of both roles beside other keys");
    expect(bridge.stderr()).toContain("4 API key(s)");
    for (const run of [relay, bridge]) expect(run.stdout() + run.stderr()).not.toMatch(/sk-solo-key|sk-team-a-/);
  });

  it("a malformed line stops both with exit 2, naming the line by its number only", async () => {
    const file = join(folder, "bad-keys");
    writeFileSync(file, "sk-fine\nthree words sk-secret\n");
    const [relay, bridge] = await Promise.all([
      runCli("toolrelay-relay", ["--api-keys-file", file]),
      runCli("toolrelay-openai", ["--local-url", "ws://127.0.0.1:9/ws", "--agent-id", "a", "--api-keys-file", file]),
    ]);
    for (const [name, run] of [
      ["toolrelay-relay", relay],
      ["toolrelay-openai", bridge],
    ] as const) {
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toContain(`${name}: ${file} line 2: expected "<key>", "<tenant> <key>" or "<tenant> listener|sdk <key>"`);
      expect(run.stderr).not.toContain("sk-secret");
    }
  });
});
