import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CliUsageError, parseCommandLine } from "@toolrelay/cli-kit";
import { startScriptedRuntime } from "toolrelay/testing";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { bridgeOptionsOf, OPENAI_COMMAND, runOpenAiCli } from "../../packages/toolrelay/src/openai/cli.js";
import { killCliProcesses, runCli } from "../support/cli-process.js";
import { until } from "../support/wait.js";

const silent = { stdout: () => {}, stderr: () => {} };
const dir = mkdtempSync(join(tmpdir(), "openai-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => killCliProcesses());

function parse(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const line = parseCommandLine(OPENAI_COMMAND, argv);
  if (line.kind !== "run") throw new Error(`expected options, got ${line.kind}`);
  return bridgeOptionsOf(line.arguments, env, silent);
}

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("toolrelay-openai arguments", () => {
  it("turns flags into bridge options", () => {
    const keys = join(dir, "keys");
    writeFileSync(keys, "# keys\nkey-one\n\n  key-two  \nteam-a key-three\n");
    const options = parse(
      [
        "--local-url",
        "ws://127.0.0.1:4500/ws",
        "--create-agent",
        "openai/gpt-5",
        "--port",
        "8080",
        "--api-key",
        "k0",
        "--api-keys-file",
        keys,
        "--workspace",
        "/srv/empty",
        "--mode",
        "standard",
        "--no-tool-nudge",
        "--thread-header",
        "none",
        "--thread-from-user",
        "--max-threads",
        "8",
        "--tool-result-timeout-ms",
        "60000",
      ],
      { LETTA_APP_SERVER_TOKEN: "secret" },
    );
    expect(options).toMatchObject({
      backend: { kind: "local", url: "ws://127.0.0.1:4500/ws", token: "secret" },
      agent: { create: { model: "openai/gpt-5" } },
      port: 8080,
      apiKeys: ["k0", "key-one", "key-two", "key-three"],
      workspace: { cwd: "/srv/empty" },
      session: { mode: "standard" },
      toolNudge: false,
      threadKeys: { header: false, user: true },
      maxThreads: 8,
      toolResultTimeoutMs: 60_000,
    });
  });

  it("passes any backend object through --backend-json (a managed sandbox, say)", () => {
    const options = parse([
      "--backend-json",
      '{"kind":"cloud","sandbox":{"ttlMinutes":5}}',
      "--agent-id",
      "agent-1",
      "--workspace",
      "runtime",
    ]);
    expect(options).toMatchObject({
      backend: { kind: "cloud", sandbox: { ttlMinutes: 5 } },
      agent: { id: "agent-1" },
      workspace: "runtime",
    });
  });

  it.each([
    [[], /exactly one of --local-url, --spawn, --cloud-environment and --backend-json/],
    [["--spawn", "--local-url", "ws://x"], /exactly one of --local-url/],
    [["--spawn"], /exactly one of --agent-id and --create-agent/],
    [["--spawn", "--agent-id", "a", "--port", "port"], /--port must be an integer from 0 to 65535/],
    [["--spawn", "--agent-id", "a", "--port", "65536"], /--port must be an integer from 0 to 65535/],
    [["--spawn", "--agent-id", "a", "--max-threads", "many"], /--max-threads must be a non-negative integer/],
    [["--spawn", "--agent-id", "a", "--tool-execution", "both"], /--tool-execution must be client or runtime/],
    [["--spawn", "--agent-id", "a", "--mode", "yolo"], /--mode must be one of standard, acceptEdits, unrestricted, strict/],
    [
      ["--spawn", "--agent-id", "a", "--tool-execution", "runtime"],
      /--tool-execution runtime needs --mode: the default \(strict\) denies every call of the runtime's own tools/,
    ],
    [["--backend-json", "{oops", "--agent-id", "a"], /--backend-json is not valid JSON/],
    [["--spawn", "--agent-id", "a", "--api-keys-file", "/nonexistent/keys"], /cannot read --api-keys-file \/nonexistent\/keys: ENOENT/],
    [["--spawn", "--agent-id", "a", "--colour"], /Unknown option '--colour'/],
  ])("refuses %j", (argv, message) => {
    expect(() => parse(argv)).toThrow(CliUsageError);
    expect(() => parse(argv)).toThrow(message);
  });
});

describe("toolrelay-openai checks its upstream at start", () => {
  it("an app-server that does not answer: exit 1 at start, naming the address and the reason; nothing listens", async () => {
    const port = await closedPort();
    const run = await runCli("toolrelay-openai", ["--local-url", `ws://127.0.0.1:${port}/ws`, "--agent-id", "a"]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toBe(
      `toolrelay-openai: the app-server at ws://127.0.0.1:${port}/ws does not answer: cannot connect to ws://127.0.0.1:${port}/ws: connect ECONNREFUSED 127.0.0.1:${port}\n`,
    );
    expect(run.stdout).toBe("");
  });

  it("a Letta API that does not answer (a cloud backend): exit 1 at start, naming its address", async () => {
    const port = await closedPort();
    const lines: string[] = [];
    const io = { stdout: (text: string) => lines.push(text), stderr: (text: string) => lines.push(text) };
    const backend = JSON.stringify({
      kind: "cloud",
      apiKey: "sk-test-key",
      baseUrl: `http://127.0.0.1:${port}`,
      environment: { connectionId: "c" },
    });
    const outcome = await runOpenAiCli(["--backend-json", backend, "--agent-id", "a"], io, {});
    expect(outcome).toEqual({ exitCode: 1 });
    expect(lines.join("")).toMatch(new RegExp(`^toolrelay-openai: the Letta API at http://127\\.0\\.0\\.1:${port} does not answer: `));
    expect(lines.join("")).not.toContain("sk-test-key");
  });

  it("an app-server that answers: the bridge starts, prints its address, and its upstream check left no connection behind", async () => {
    const runtime = await startScriptedRuntime({ script: async (turn) => void (await turn.say("hi")) });
    const lines: string[] = [];
    const io = { stdout: (text: string) => lines.push(text), stderr: (text: string) => lines.push(text) };
    const outcome = await runOpenAiCli(["--local-url", runtime.url, "--agent-id", "a"], io, {});
    try {
      expect(outcome.exitCode).toBe(0);
      expect(lines[0]).toBe(`OpenAI bridge listening on ${outcome.bridge!.url}\n`);
      await until(() => runtime.connections === 0, "the check's socket to close", 5_000);
    } finally {
      await outcome.bridge?.close();
      await runtime.close();
    }
  });
});
