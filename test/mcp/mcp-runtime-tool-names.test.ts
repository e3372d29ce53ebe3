/**
 * An MCP server's tool named like one of the runtime's own tools (`Read`, `Bash`, ...), against a
 * real MCP Streamable HTTP server on loopback (the SDK's McpServer in this process):
 *
 * - in the first listing it fails the start (`INVALID_TOOL_DEFINITION`, cause `RESERVED_TOOL_NAME`)
 *   with a message that names the tool and the way out that mcpTools has (`prefix`, `filter`), not
 *   defineTool's `overridesRuntimeTool`, which mcpTools does not take; a `prefix` avoids the clash;
 * - in a listing after `notifications/tools/list_changed`, only that tool is left out: the rest of
 *   the new list reaches the session (and the runtime), and one `error` event names the tool and
 *   `prefix` (once per tool, not at every later change).
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { isToolrelayError, type ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import { mcpTools } from "../../packages/toolrelay/src/mcp/index.js";
import type { OpenToolSource } from "../../packages/toolrelay/src/tools/index.js";
import { scriptedRuntime, sessionOn } from "../session/session-support.js";
import { until } from "../support/wait.js";

/** The tools each new MCP session's server starts with; `servers` holds every server made, newest last. */
let initialTools: string[] = [];
const servers: McpServer[] = [];
let http: Server;
let url: string;

function register(server: McpServer, name: string): void {
  server.registerTool(name, { description: `The server's ${name}.`, inputSchema: { path: z.string() } }, async ({ path }) => ({
    content: [{ type: "text", text: `${name} ${path}` }],
  }));
}

beforeAll(async () => {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  http = createServer(async (request, response) => {
    const id = request.headers["mcp-session-id"];
    let transport = typeof id === "string" ? transports.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => void transports.set(sessionId, transport!),
      });
      const server = new McpServer({ name: "toolrelay-reserved-names", version: "1.0.0" });
      for (const name of initialTools) register(server, name);
      servers.push(server);
      await server.connect(transport);
    }
    await transport.handleRequest(request, response);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
});

const opened: OpenToolSource[] = [];
afterEach(async () => {
  for (const source of opened.splice(0)) await source.close();
});

async function open(options: { prefix?: string } = {}): Promise<OpenToolSource> {
  const source = await mcpTools({ url, name: "files", ...options }).open({ signal: new AbortController().signal });
  opened.push(source);
  return source;
}

describe("an MCP server's tool named like one of the runtime's own tools", () => {
  it("in the first listing fails the start, naming the tool, prefix and filter (not an option mcpTools lacks)", async () => {
    initialTools = ["grep", "Read"];
    const refusal = await open().then(
      () => undefined,
      (error: unknown) => error as ToolrelayError,
    );
    expect(refusal).toMatchObject({ code: "INVALID_TOOL_DEFINITION", details: { tool: "Read", name: "Read" } });
    expect(isToolrelayError(refusal!.cause, "RESERVED_TOOL_NAME")).toBe(true);
    expect(refusal!.message).toContain('MCP server "files" offers the tool "Read"');
    expect(refusal!.message).toContain('Give the server a prefix (prefix: "fs_" offers it as "fs_Read")');
    expect(refusal!.message).toContain("or leave it out with filter");
    expect(refusal!.message).not.toContain("overridesRuntimeTool");
  });

  it("a prefix avoids the clash", async () => {
    initialTools = ["grep", "Read"];
    const source = await open({ prefix: "fs_" });
    expect(source.tools.map((tool) => tool.name)).toEqual(["fs_grep", "fs_Read"]);
  });

  it("in a later listing only that tool is left out: the session gets the rest, and one error event names it and prefix", async () => {
    initialTools = ["grep"];
    let visible: string[] = [];
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        visible = turn.tools.map((tool) => tool.name);
        await turn.say("hi");
      },
    });
    const session = await sessionOn(runtime, { tools: [mcpTools({ url, name: "files" })] });
    const server = servers.at(-1)!;
    const errors: ToolrelayError[] = [];
    const changes: string[][] = [];
    session.on("error", (error) => errors.push(error));
    session.on("tools-change", ({ names }) => changes.push(names));
    await session.send("hello").result;
    expect(visible).toEqual(["grep"]);

    // The server adds its own Read beside a new find, and says its list changed.
    register(server, "Read");
    register(server, "find");
    await until(() => changes.some((names) => names.includes("find")), "the changed tools reach the session", 10_000);
    expect(changes.at(-1)).toEqual(["grep", "find"]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: "INVALID_TOOL_DEFINITION", details: { server: "files", tool: "Read", name: "Read" } });
    expect(errors[0]!.message).toContain('MCP server "files" changed its tools; the tool "Read" is left out (the others are updated)');
    expect(errors[0]!.message).toContain("Give the server a prefix");
    expect(isToolrelayError(errors[0]!.cause, "RESERVED_TOOL_NAME")).toBe(true);

    // A later change applies too, and the tool left out is not reported again.
    register(server, "count");
    await until(() => changes.some((names) => names.includes("count")), "the next change reaches the session", 10_000);
    expect(changes.at(-1)).toEqual(["grep", "find", "count"]);
    expect(errors).toHaveLength(1);
    // What the runtime offers the model: the server's tools without its Read.
    await session.send("hello again").result;
    expect(visible).toEqual(["grep", "find", "count"]);
  });
});
