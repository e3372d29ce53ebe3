/**
 * mcpTools({ url, headers }) against a real MCP Streamable HTTP server on loopback (the SDK's
 * McpServer and StreamableHTTPServerTransport in this process, stateful sessions).
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { mcpTools } from "../../packages/toolrelay/src/mcp/index.js";
import type { ToolCallContext } from "../../packages/toolrelay/src/tools/index.js";

let http: Server;
let url: string;
const seenHeaders: IncomingHttpHeaders[] = [];

function mcpServer(): McpServer {
  const server = new McpServer({ name: "toolrelay-http-test", version: "1.0.0" });
  server.registerTool(
    "weather",
    {
      title: "Weather",
      description: "Current weather for a city.",
      inputSchema: { city: z.string().min(1).describe("City name"), unit: z.enum(["c", "f"]).default("c") },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ city, unit }) => ({ content: [{ type: "text", text: `sunny in ${city} (${unit})` }] }),
  );
  return server;
}

beforeAll(async () => {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  http = createServer(async (request, response) => {
    seenHeaders.push(request.headers);
    const id = request.headers["mcp-session-id"];
    let transport = typeof id === "string" ? transports.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => void transports.set(sessionId, transport!),
      });
      await mcpServer().connect(transport);
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

const context: ToolCallContext = {
  signal: new AbortController().signal,
  toolCallId: "c",
  agentId: "a",
  conversationId: "v",
  idempotencyKey: "tr1_test",
  progress: () => undefined,
};

describe("mcpTools over Streamable HTTP", () => {
  it("lists the server's tools with their schema and annotations, calls them, and sends the headers given", async () => {
    const source = mcpTools({ url, headers: { authorization: "Bearer test-token" }, prefix: "remote_" });
    expect(source.label).toBe(`MCP server "${new URL(url).host}"`);
    const opened = await source.open({ signal: new AbortController().signal });
    try {
      const [weather] = opened.tools;
      expect(opened.tools).toHaveLength(1);
      expect(weather!.name).toBe("remote_weather");
      expect(weather!.description).toBe("Current weather for a city.");
      expect(weather!.annotations).toEqual({ title: "Weather", readOnlyHint: true, openWorldHint: true });
      expect(weather!.jsonSchema).toMatchObject({
        type: "object",
        properties: {
          city: { type: "string", minLength: 1, description: "City name" },
          unit: { type: "string", enum: ["c", "f"], default: "c" },
        },
        required: ["city"],
      });
      expect(await weather!.execute({ city: "Oslo" }, context)).toEqual({
        content: [{ type: "text", text: "sunny in Oslo (c)" }],
        isError: false,
      });
      // The server validates: its refusal is a tool error the model reads.
      const refused = (await weather!.execute({ city: "" }, context)) as { content: Array<{ text: string }>; isError: boolean };
      expect(refused.isError).toBe(true);
      expect(refused.content[0]!.text).toContain("city");
      expect(seenHeaders.length).toBeGreaterThan(2);
      expect(seenHeaders.every((headers) => headers.authorization === "Bearer test-token")).toBe(true);
    } finally {
      await opened.close();
    }
  });

  it("a server that is not there fails to open with TOOL_SOURCE_FAILED", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(
      mcpTools({ url: `http://127.0.0.1:${port}/mcp`, startTimeoutMs: 5_000 }).open({ signal: new AbortController().signal }),
    ).rejects.toMatchObject({
      code: "TOOL_SOURCE_FAILED",
    });
  });
});
