import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { OpenAiCliUsageError, parseOpenAiCliArguments, runOpenAiCli } from "../../packages/toolrelay/src/openai/cli.js";

const silent = { stdout: () => {}, stderr: () => {} };
const dir = mkdtempSync(join(tmpdir(), "openai-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("toolrelay-openai arguments", () => {
  it("turns flags into bridge options", () => {
    const keys = join(dir, "keys");
    writeFileSync(keys, "# keys\nkey-one\n\n  key-two  \n");
    const options = parseOpenAiCliArguments(
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
      silent,
    );
    expect(options).toMatchObject({
      backend: { kind: "local", url: "ws://127.0.0.1:4500/ws", token: "secret" },
      agent: { create: { model: "openai/gpt-5" } },
      port: 8080,
      apiKeys: ["k0", "key-one", "key-two"],
      workspace: { cwd: "/srv/empty" },
      session: { mode: "standard" },
      toolNudge: false,
      threadKeys: { header: false, user: true },
      maxThreads: 8,
      toolResultTimeoutMs: 60_000,
    });
  });

  it("passes any backend object through --backend-json (a managed sandbox, say)", () => {
    const options = parseOpenAiCliArguments(
      ["--backend-json", '{"kind":"cloud","sandbox":{"ttlMinutes":5}}', "--agent-id", "agent-1", "--workspace", "runtime"],
      {},
      silent,
    );
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
    [["--spawn", "--agent-id", "a", "--port", "port"], /--port must be a non-negative integer/],
    [["--spawn", "--agent-id", "a", "--max-threads", "many"], /--max-threads must be a non-negative integer/],
    [["--spawn", "--agent-id", "a", "--tool-execution", "both"], /--tool-execution must be client or runtime/],
    [["--backend-json", "{oops", "--agent-id", "a"], /--backend-json is not valid JSON/],
    [["--spawn", "--agent-id", "a", "--api-keys-file", "/nonexistent/keys"], /cannot read --api-keys-file \/nonexistent\/keys: ENOENT/],
    [["--spawn", "--agent-id", "a", "--colour"], /Unknown option '--colour'/],
  ])("refuses %j", (argv, message) => {
    expect(() => parseOpenAiCliArguments(argv, {}, silent)).toThrow(OpenAiCliUsageError);
    expect(() => parseOpenAiCliArguments(argv, {}, silent)).toThrow(message);
  });

  it("runs: prints the address, and a bad option sets exit code 1 with the reason", async () => {
    const lines: string[] = [];
    const io = { stdout: (line: string) => lines.push(line), stderr: (line: string) => lines.push(line) };
    const bridge = await runOpenAiCli(["--local-url", "ws://127.0.0.1:9/ws", "--agent-id", "a"], io, {});
    expect(lines[0]).toBe(`OpenAI bridge listening on ${bridge!.url}`);
    await bridge!.close();
    const previous = process.exitCode;
    const failed = await runOpenAiCli(["--local-url", "ws://127.0.0.1:9/ws", "--agent-id", "a", "--host", "0.0.0.0"], io, {});
    expect(failed).toBeUndefined();
    expect(process.exitCode).toBe(1);
    expect(lines.at(-1)).toMatch(/host 0\.0\.0\.0 is not a loopback address/);
    process.exitCode = previous;
  });
});
