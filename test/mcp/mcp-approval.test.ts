/**
 * mcpTools()'s `approval` policy against real MCP servers (the real
 * @modelcontextprotocol/server-filesystem, and the suite's own test server for unannotated tools):
 * which tools ask (`needsApproval`) under each policy, MCP's defaults for an unannotated tool, bad
 * policies refused naming the option or the tool, and inside a session on the scripted runtime: a
 * destructive call asks `canUseTool` (kind client-tool, with the MCP annotations) and reaches the
 * server only when allowed; without `canUseTool` it is denied (`no-approver`), the model reads
 * why, and the server's tool never ran (the file it would write does not exist).
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { deniedText } from "../../packages/toolrelay/src/calls/index.js";
import type { ApprovalRequest, ToolCallEndEvent } from "../../packages/toolrelay/src/index.js";
import { mcpTools, type McpToolInfo, type McpToolsOptions } from "../../packages/toolrelay/src/mcp/index.js";
import type { OpenToolSource } from "../../packages/toolrelay/src/tools/index.js";
import { scriptedRuntime, sessionOn } from "../session/session-support.js";

const FILESYSTEM_SERVER = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url),
);
const TEST_SERVER = fileURLToPath(new URL("../fixtures/mcp/test-mcp-server.mjs", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "toolrelay-mcp-approval-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const open: OpenToolSource[] = [];
afterEach(async () => {
  for (const source of open.splice(0)) await source.close();
});

/** A fresh root for the filesystem server. */
function root(): string {
  return mkdtempSync(join(scratch, "root-"));
}

function filesystem(approval: McpToolsOptions["approval"], directory = root(), extra: Partial<McpToolsOptions> = {}) {
  return mcpTools({
    command: process.execPath,
    args: [FILESYSTEM_SERVER, directory],
    name: "filesystem",
    approval,
    ...extra,
  } as McpToolsOptions);
}

/** Which tools ask, by name, once the source is open. */
async function asking(options: McpToolsOptions): Promise<Record<string, unknown>> {
  const opened = await mcpTools(options).open({ signal: new AbortController().signal });
  open.push(opened);
  return Object.fromEntries(opened.tools.map((tool) => [tool.name, tool.needsApproval]));
}

const fsOptions = (approval?: McpToolsOptions["approval"]): McpToolsOptions => ({
  command: process.execPath,
  args: [FILESYSTEM_SERVER, root()],
  name: "filesystem",
  ...(approval === undefined ? {} : { approval }),
});

describe("mcpTools approval policy: which tools ask", () => {
  it('default "never": no tool asks, not even write_file', async () => {
    const tools = await asking(fsOptions());
    expect(tools.write_file).toBe(false);
    expect(Object.values(tools).every((value) => value === false)).toBe(true);
  });

  it('"destructive": write_file, edit_file and move_file (destructiveHint: true) ask; create_directory (false) and readOnly tools do not', async () => {
    const tools = await asking(fsOptions("destructive"));
    expect(tools).toMatchObject({
      write_file: true,
      edit_file: true,
      move_file: true,
      create_directory: false,
      read_text_file: false,
      list_directory: false,
    });
    expect(
      Object.entries(tools)
        .filter(([, value]) => value === true)
        .map(([name]) => name)
        .sort(),
    ).toEqual(["edit_file", "move_file", "write_file"]);
  });

  it('"destructive" reads MCP\'s defaults: an unannotated tool asks (it may be destructive), a readOnlyHint one does not', async () => {
    const tools = await asking({ command: process.execPath, args: [TEST_SERVER], name: "test", approval: "destructive" });
    expect(tools).toMatchObject({ echo: false, slow_delete: true, rich: true, fails: true, dotted_name: true });
  });

  it("a Streamable HTTP server gets the same policy: its unannotated and destructive tools ask, its readOnly one does not", async () => {
    const transports = new Map<string, StreamableHTTPServerTransport>();
    const http = createServer(async (request, response) => {
      const id = request.headers["mcp-session-id"];
      let transport = typeof id === "string" ? transports.get(id) : undefined;
      if (!transport) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sessionId) => void transports.set(sessionId, transport!),
        });
        const server = new McpServer({ name: "toolrelay-approval-http", version: "1.0.0" });
        const ok = async () => ({ content: [{ type: "text" as const, text: "ok" }] });
        server.registerTool("lookup", { description: "Looks up.", annotations: { readOnlyHint: true } }, ok);
        server.registerTool("purge", { description: "Purges.", annotations: { destructiveHint: true } }, ok);
        server.registerTool("append", { description: "Appends.", annotations: { destructiveHint: false } }, ok);
        server.registerTool("unannotated", { description: "Says nothing about itself." }, ok);
        await server.connect(transport);
      }
      await transport.handleRequest(request, response);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
      expect(await asking({ url, approval: "destructive" })).toEqual({ lookup: false, purge: true, append: false, unannotated: true });
    } finally {
      for (const source of open.splice(0)) await source.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });

  it('"always": every tool asks', async () => {
    const tools = await asking(fsOptions("always"));
    expect(Object.values(tools).length).toBeGreaterThan(10);
    expect(Object.values(tools).every((value) => value === true)).toBe(true);
  });

  it("a function gets each tool as listed (its MCP name, before the prefix, and annotations) and decides", async () => {
    const seen: McpToolInfo[] = [];
    const tools = await asking({
      ...fsOptions((tool) => {
        seen.push(tool);
        return tool.name === "create_directory";
      }),
      prefix: "fs_",
    });
    expect(tools).toMatchObject({ fs_create_directory: true, fs_write_file: false });
    expect(seen.find((tool) => tool.name === "write_file")?.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
  });

  it("refuses a policy that is no policy, naming the option", () => {
    for (const [approval, shown] of [
      ["sometimes", '"sometimes"'],
      [true, "boolean"],
      [null, "null"],
    ] as const) {
      expect(() => filesystem(approval as never)).toThrow(
        expect.objectContaining({
          code: "INVALID_OPTIONS",
          message: `mcpTools(): approval must be "never", "destructive", "always" or a function of the tool, got ${shown}`,
        }),
      );
    }
  });

  it("a policy function that throws or answers no boolean fails the start, naming the tool", async () => {
    const throwing = mcpTools(
      fsOptions((tool) => {
        if (tool.name === "write_file") throw new Error("policy store down");
        return false;
      }),
    );
    await expect(throwing.open({ signal: new AbortController().signal })).rejects.toMatchObject({
      code: "INVALID_TOOL_DEFINITION",
      message: 'MCP server "filesystem" offers the tool "write_file": the approval policy threw: policy store down',
    });
    const vague = mcpTools(fsOptions((() => "yes") as never));
    await expect(vague.open({ signal: new AbortController().signal })).rejects.toMatchObject({
      code: "INVALID_TOOL_DEFINITION",
      message: expect.stringMatching(
        /^MCP server "filesystem" offers the tool "[a-z_]+": the approval policy must return true or false, got string$/,
      ),
    });
  });
});

describe("mcpTools approval policy in a session", () => {
  /** A runtime whose model writes `path`, then reads `existing`. */
  async function runtimeWriting(path: string, existing: string) {
    return scriptedRuntime({
      script: async (turn) => {
        await turn.callTool("write_file", { path, content: "WRITTEN" }, { toolCallId: "call_0" });
        await turn.callTool("read_text_file", { path: existing }, { toolCallId: "call_1" });
      },
    });
  }

  it("no canUseTool: the session is made, a destructive call is denied (no-approver) unsent, the model reads why; a readOnly call runs", async () => {
    const directory = root();
    const target = join(directory, "target.txt");
    const existing = join(directory, "existing.txt");
    writeFileSync(existing, "EXISTING");
    const runtime = await runtimeWriting(target, existing);
    const session = await sessionOn(runtime, { tools: [filesystem("destructive", directory)] });
    const ends: ToolCallEndEvent[] = [];
    session.on("tool-call-end", (event) => ends.push(event));
    await session.send("write it").result;

    expect(existsSync(target)).toBe(false);
    expect(ends.map((end) => [end.toolName, end.outcome])).toEqual([
      ["write_file", "denied"],
      ["read_text_file", "ok"],
    ]);
    expect(ends[0]!.detail).toEqual({ kind: "denied", reason: "no-approver", message: "" });
    expect(runtime.calls.map((call) => call.result!.toolReturn)).toEqual([
      deniedText("write_file", { kind: "denied", reason: "no-approver", message: "" }),
      "EXISTING",
    ]);
    expect(runtime.calls[0]!.result!.toolReturn).toBe(
      "Tool write_file was not run: it needs the user's approval and this application cannot ask for it.",
    );
  });

  it("with canUseTool: asked with kind client-tool and the MCP annotations; declined, the server never writes; allowed, it does", async () => {
    const directory = root();
    const target = join(directory, "target.txt");
    const existing = join(directory, "existing.txt");
    writeFileSync(existing, "EXISTING");
    const runtime = await runtimeWriting(target, existing);
    const asked: ApprovalRequest[] = [];
    let allow = false;
    const session = await sessionOn(runtime, {
      tools: [filesystem("destructive", directory)],
      canUseTool: (request) => {
        asked.push(request);
        return allow ? { behavior: "allow" } : { behavior: "deny", message: "not that file" };
      },
    });
    await session.send("write it").result;

    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      kind: "client-tool",
      toolName: "write_file",
      toolCallId: "call_0",
      input: { path: target, content: "WRITTEN" },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    });
    expect(existsSync(target)).toBe(false);
    expect(runtime.calls[0]!.result!.toolReturn).toBe(
      "The user declined this call of tool write_file; it was not run. The user said: not that file",
    );

    allow = true;
    await session.send("write it again").result;
    expect(asked).toHaveLength(2);
    expect(readFileSync(target, "utf8")).toBe("WRITTEN");
    expect(runtime.calls[2]!.result!.toolReturn).toContain("Successfully wrote to");
  });
});
