/**
 * mcpTools() against a real MCP server process (test/fixtures/mcp/test-mcp-server.mjs, the SDK's
 * own Server over stdio): listing every page, the mapping of names, descriptions, schemas and
 * annotations, results, cancellation, list_changed, a crash, the child's environment and its end.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { isToolrelayError, type ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import { mcpTools } from "../../packages/toolrelay/src/mcp/index.js";
import type { ClientTool, OpenToolSource, ToolCallContext } from "../../packages/toolrelay/src/tools/index.js";
import { letTimePass } from "../support/wait.js";

const SERVER = new URL("../fixtures/mcp/test-mcp-server.mjs", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "toolrelay-mcp-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const open: OpenToolSource[] = [];
afterEach(async () => {
  for (const source of open.splice(0)) await source.close();
});

async function start(extra: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  const eventLog = join(scratch, `events-${Math.random().toString(36).slice(2)}.log`);
  const source = mcpTools({
    command: process.execPath,
    args: [SERVER],
    env: { EVENT_LOG: eventLog, PAGE_SIZE: "2", ...env },
    name: "test",
    ...extra,
  });
  const opened = await source.open({ signal: new AbortController().signal });
  open.push(opened);
  const events = () => (existsSync(eventLog) ? readFileSync(eventLog, "utf8").split("\n").filter(Boolean) : []);
  const pid = Number(
    events()
      .find((line) => line.startsWith("started "))
      ?.split(" ")[1],
  );
  return { source, opened, events, pid };
}

function context(signal = new AbortController().signal): ToolCallContext {
  return {
    signal,
    toolCallId: "call-1",
    agentId: "agent-1",
    conversationId: "conv-1",
    idempotencyKey: "tr1_test",
    progress: () => undefined,
  };
}

function tool(opened: OpenToolSource, name: string): ClientTool {
  const found = opened.tools.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no tool ${name}; have ${opened.tools.map((candidate) => candidate.name).join(", ")}`);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("mcpTools over stdio", () => {
  it("lists every page; names (sanitized), descriptions, schemas and annotations are the server's", async () => {
    const { opened } = await start();
    expect(opened.tools.map((candidate) => candidate.name)).toEqual([
      "echo",
      "rich",
      "fails",
      "structured_only",
      "slow_delete",
      "crash",
      "add_tool",
      "env_dump",
      "dotted_name",
    ]);
    const echo = tool(opened, "echo");
    expect(echo.description).toBe("Echoes the text back, with the text's length as structured content.");
    expect(echo.jsonSchema).toEqual({
      type: "object",
      properties: { text: { type: "string", description: "What to echo", minLength: 1 } },
      required: ["text"],
    });
    expect(echo.annotations).toEqual({ title: "Echo", readOnlyHint: true, openWorldHint: false });
    expect(tool(opened, "slow_delete").annotations).toEqual({ destructiveHint: true, idempotentHint: false });
    expect(echo.timeoutMs).toBe(60_000);
    expect(echo.inputKind).toBe("json-schema");
  });

  it("puts the prefix before every name and calls the tool by its MCP name", async () => {
    const { opened } = await start({ prefix: "t_", callTimeoutMs: 5_000 });
    expect(opened.tools.every((candidate) => candidate.name.startsWith("t_"))).toBe(true);
    expect(tool(opened, "t_echo").timeoutMs).toBe(5_000);
    expect(await tool(opened, "t_dotted_name").execute({}, context())).toEqual({
      content: [{ type: "text", text: "dotted ok" }],
      isError: false,
    });
  });

  it("passes the input through unvalidated: the server is the validator, its refusal reaches the model", async () => {
    const { opened } = await start();
    const echo = tool(opened, "echo");
    expect(echo.validateInput({ text: 7, extra: true })).toEqual({ ok: true, value: { text: 7, extra: true } });
    expect(await echo.execute({ text: "hi" }, context())).toEqual({ content: [{ type: "text", text: "echo: hi" }], isError: false });
  });

  it("maps every content kind; structuredContent is not repeated when there are blocks, sent as JSON when there are none", async () => {
    const { opened } = await start();
    const rich = await tool(opened, "rich").execute({}, context());
    expect(rich).toEqual({
      isError: false,
      content: [
        { type: "text", text: "caption" },
        { type: "image", data: expect.stringMatching(/^iVBOR/), mimeType: "image/png" },
        { type: "text", text: "Resource file:///notes.txt (text/plain):\nthe notes" },
        { type: "text", text: "[binary resource file:///blob.bin (application/octet-stream), 4 bytes: not sent]" },
        { type: "text", text: "Resource link: big.csv file:///big.csv (text/csv)\nA large table" },
        { type: "text", text: "[audio (audio/wav), 3 bytes: not sent, the model cannot hear it here]" },
      ],
    });
    expect(await tool(opened, "structured_only").execute({}, context())).toEqual({
      content: [{ type: "text", text: JSON.stringify({ rows: 2, ok: true }, null, 2) }],
      isError: false,
    });
    expect(await tool(opened, "fails").execute({}, context())).toEqual({
      content: [{ type: "text", text: "the disk is full" }],
      isError: true,
    });
  });

  it("an aborted call sends MCP's cancellation to the server", async () => {
    const { opened, events } = await start();
    const controller = new AbortController();
    const running = tool(opened, "slow_delete").execute({ path: "/x" }, context(controller.signal)) as Promise<unknown>;
    const settled = running.then(
      () => "resolved",
      () => "rejected",
    );
    await vi.waitFor(() => expect(events().some((line) => line.startsWith("started"))).toBe(true));
    await letTimePass(100); // on purpose: the call is well under way at the server when it is aborted
    controller.abort(new Error("the turn was aborted"));
    expect(await settled).toBe("rejected");
    await vi.waitFor(() => expect(events()).toContainEqual(expect.stringContaining("cancelled slow_delete")));
  });

  it("follows notifications/tools/list_changed: the new tool appears and can be called", async () => {
    const { opened } = await start();
    let changes = 0;
    opened.onToolsChanged(() => changes++);
    await tool(opened, "add_tool").execute({}, context());
    await vi.waitFor(() => expect(changes).toBe(1));
    expect(opened.tools.map((candidate) => candidate.name)).toContain("added_1");
    expect(await tool(opened, "added_1").execute({}, context())).toEqual({
      content: [{ type: "text", text: "added_1 ran" }],
      isError: false,
    });
  });

  it("gives the child only PATH and the variables named, none of this process's secrets", async () => {
    process.env.TOOLRELAY_TEST_SECRET = "do-not-leak";
    try {
      const { opened } = await start({}, { GREETING: "hello" });
      const result = (await tool(opened, "env_dump").execute({}, context())) as { content: Array<{ text: string }> };
      const names = JSON.parse(result.content[0]!.text) as string[];
      expect(names).not.toContain("TOOLRELAY_TEST_SECRET");
      expect(names).not.toContain("HOME");
      expect(names).toEqual(expect.arrayContaining(["PATH", "GREETING", "EVENT_LOG", "PAGE_SIZE"]));
      expect(names.filter((name) => !["PATH", "GREETING", "EVENT_LOG", "PAGE_SIZE"].includes(name))).toEqual([]);
    } finally {
      delete process.env.TOOLRELAY_TEST_SECRET;
    }
  });

  it("a crashed server: its tools answer a clear error, the failure is reported once with its exit code", async () => {
    const { opened } = await start();
    const errors: ToolrelayError[] = [];
    opened.onError?.((error) => errors.push(error));
    await expect(Promise.resolve(tool(opened, "crash").execute({}, context()))).rejects.toThrow('MCP server "test" exited with code 3');
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(errors[0]).toMatchObject({ code: "TOOL_SOURCE_FAILED", details: { server: "test", exitCode: 3 } });
    expect(errors[0]!.message).toContain("test server ready");
    await expect(Promise.resolve(tool(opened, "echo").execute({ text: "x" }, context()))).rejects.toThrow(
      'MCP server "test" exited with code 3; its tools cannot be called in this session.',
    );
  });

  it("close() ends the child process (checked by PID)", async () => {
    const { opened, pid } = await start();
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(true);
    await opened.close();
    expect(alive(pid)).toBe(false);
  });

  it("close() ends a server started through a wrapper too (the whole process group)", async () => {
    const eventLog = join(scratch, "wrapped.log");
    const source = mcpTools({
      command: "/bin/sh",
      args: ["-c", `"${process.execPath}" "${SERVER}"; exit $?`],
      env: { EVENT_LOG: eventLog },
      name: "wrapped",
    });
    const opened = await source.open({ signal: new AbortController().signal });
    const pid = Number(
      readFileSync(eventLog, "utf8")
        .split("\n")
        .find((line) => line.startsWith("started "))!
        .split(" ")[1],
    );
    expect(alive(pid)).toBe(true);
    await opened.close();
    await vi.waitFor(() => expect(alive(pid)).toBe(false));
  });

  it("a command that does not exist fails to open with TOOL_SOURCE_FAILED", async () => {
    const source = mcpTools({ command: "toolrelay-no-such-command", name: "missing" });
    await expect(source.open({ signal: new AbortController().signal })).rejects.toMatchObject({
      code: "TOOL_SOURCE_FAILED",
      message: expect.stringContaining('MCP server "missing" did not start'),
    });
  });

  it("a server that exits before initialize fails to open, with its stderr in the message", async () => {
    const source = mcpTools({
      command: process.execPath,
      args: ["-e", "process.stderr.write('bad config: no root given'); process.exit(2)"],
      name: "broken",
    });
    const error = await source.open({ signal: new AbortController().signal }).catch((caught: unknown) => caught);
    expect(isToolrelayError(error, "TOOL_SOURCE_FAILED")).toBe(true);
    expect((error as Error).message).toContain("bad config: no root given");
  });

  it("refuses bad options at once, naming them", () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{}, "exactly one"],
      [{ command: "x", url: "http://127.0.0.1/mcp" }, "exactly one"],
      [{ command: "" }, "command must be a non-empty string"],
      [{ command: "x", args: [1] }, "args must be an array of strings"],
      [{ command: "x", env: { A: 1 } }, "env.A must be a string"],
      [{ command: "x", prefix: "a.b" }, "prefix"],
      [{ command: "x", callTimeoutMs: 300_001 }, "callTimeoutMs"],
      [{ command: "x", headers: {} }, 'unknown option "headers"'],
      [{ url: "ftp://127.0.0.1/" }, "url must be http: or https:"],
      [{ url: "not a url" }, "is not a URL"],
      [{ command: "x", filter: "echo" }, "filter must be a function"],
    ];
    for (const [options, message] of bad) {
      expect(() => mcpTools(options as never), JSON.stringify(options)).toThrow(
        expect.objectContaining({ code: "INVALID_OPTIONS", message: expect.stringContaining(message) }),
      );
    }
  });

  it("filter leaves tools out", async () => {
    const { opened } = await start({
      filter: (candidate: { annotations?: { readOnlyHint?: boolean } }) => candidate.annotations?.readOnlyHint === true,
    });
    expect(opened.tools.map((candidate) => candidate.name)).toEqual(["echo"]);
  });
});
