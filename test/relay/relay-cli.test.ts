import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { CliUsageError, parseCommandLine } from "@toolrelay/cli-kit";
import { RELAY_COMMAND, relayOptionsOf } from "../../packages/relay/src/cli.js";
import { until } from "../support/wait.js";
import { httpJson } from "./support/http-json.js";

const BIN = fileURLToPath(new URL("../../packages/relay/src/bin.ts", import.meta.url));
const children = new Set<ChildProcess>();
const folders: string[] = [];

afterEach(() => {
  for (const child of children) child.kill("SIGKILL");
  children.clear();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function runCli(args: string[]): { child: ChildProcess; stdout: string[]; stderr: string[]; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ["--import", "tsx", BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { child, stdout, stderr, exited };
}

function waitForOutput(lines: string[], pattern: RegExp, timeoutMs = 15_000): Promise<RegExpMatchArray> {
  return until(
    () => pattern.exec(lines.join("")),
    () => `${pattern} in the output: ${lines.join("")}`,
    timeoutMs,
    20,
  );
}

/** Resolves with `promise`'s value, or rejects after `ms`; the timer is cleared either way. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timed out")), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

const quiet = { stdout: () => {}, stderr: () => {} };

/** The relay options of a command line (through the CLI's own parser and option table). */
function parseRelayCliArguments(argv: string[]) {
  const line = parseCommandLine(RELAY_COMMAND, argv);
  return line.kind === "run" ? relayOptionsOf(line.arguments, quiet) : undefined;
}

describe("relay CLI", () => {
  it("parses repeatable keys, a keys file and the listener mode", () => {
    const folder = mkdtempSync(join(tmpdir(), "relay-cli-"));
    folders.push(folder);
    const file = join(folder, "keys");
    writeFileSync(file, "# keys\nfile-key-1\n\n  file-key-2  \n");
    const options = parseRelayCliArguments([
      "--api-key",
      "a",
      "--api-key",
      "b",
      "--api-keys-file",
      file,
      "--listener-mode",
      "single",
      "--port",
      "8123",
    ]);
    expect(options).toMatchObject({
      apiKeys: ["a", "b", "file-key-1", "file-key-2"],
      listenerMode: "single",
      port: 8123,
      host: "127.0.0.1",
    });
    expect(parseRelayCliArguments(["--help"])).toBeUndefined();
    expect(() => parseRelayCliArguments(["--listener-mode", "double"])).toThrow(CliUsageError);
    expect(() => parseRelayCliArguments(["--port", "70000"])).toThrow(CliUsageError);
    expect(() => parseRelayCliArguments(["--bogus"])).toThrow(CliUsageError);
  });

  it("reads tenants and key roles from the keys files and every bound from its flag; a malformed line is named by its number only", () => {
    const folder = mkdtempSync(join(tmpdir(), "relay-cli-"));
    folders.push(folder);
    const file = join(folder, "keys");
    writeFileSync(file, "# team a\nteam-a key-a1\nteam-a   key-a2\nsolo-key\nteam-b key-b\nteam-c listener key-c-listener\n");
    const second = join(folder, "more-keys");
    writeFileSync(second, "team-c sdk key-c-app\nteam-b sdk key-b-app\n");
    const options = parseRelayCliArguments([
      "--api-keys-file",
      file,
      "--api-keys-file",
      second,
      "--max-unacked-bytes",
      "1048576",
      "--handshake-timeout-ms",
      "2000",
      "--no-json-pongs",
    ]);
    expect(options).toMatchObject({
      apiKeys: ["solo-key"],
      tenants: {
        "team-a": { listener: ["key-a1", "key-a2"], sdk: ["key-a1", "key-a2"] },
        "team-b": { listener: ["key-b"], sdk: ["key-b", "key-b-app"] },
        "team-c": { listener: ["key-c-listener"], sdk: ["key-c-app"] },
      },
      maxUnackedBytes: 1_048_576,
      handshakeTimeoutMs: 2_000,
      respondToJsonPings: false,
    });
    expect(() => parseRelayCliArguments(["--max-connections", "many"])).toThrow(CliUsageError);
    writeFileSync(file, "team-a key-a1\nthree words here-secret\n");
    expect(() => parseRelayCliArguments(["--api-keys-file", file])).toThrow(/line 2: expected/);
    expect(() => parseRelayCliArguments(["--api-keys-file", file])).not.toThrow(/here-secret/);
  });

  it("prints its address, serves registrations, and exits 0 on SIGTERM", async () => {
    const folder = mkdtempSync(join(tmpdir(), "relay-cli-"));
    folders.push(folder);
    const file = join(folder, "keys");
    writeFileSync(file, "cli-key-123\n");
    const run = runCli(["--api-keys-file", file]);
    const [, url] = await waitForOutput(run.stdout, /Relay listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const denied = await httpJson(`${url}/v1/environments`);
    expect(denied.status).toBe(401);
    const registered = await httpJson(`${url}/v1/environments/register`, {
      headers: { authorization: "Bearer cli-key-123" },
      body: { deviceId: "d", connectionName: "n" },
    });
    expect(registered.status).toBe(200);
    run.child.kill("SIGTERM");
    expect(await withTimeout(run.exited, 5_000)).toBe(0);
    expect(run.stdout.join("") + run.stderr.join("")).not.toContain("cli-key-123");
  });

  it("refuses a public bind without keys (exit 1) and bad arguments (exit 2)", async () => {
    const publicBind = runCli(["--host", "0.0.0.0"]);
    expect(await withTimeout(publicBind.exited, 15_000)).toBe(1);
    expect(publicBind.stderr.join("")).toMatch(/non-loopback/);
    const bad = runCli(["--listener-mode", "nope"]);
    expect(await withTimeout(bad.exited, 15_000)).toBe(2);
    expect(bad.stderr.join("")).toMatch(/Usage: toolrelay-relay/);
  });
});
