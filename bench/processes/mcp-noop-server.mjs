// An MCP stdio server with one no-op tool: the subprocess a user would otherwise put behind an
// agent's tool call (the design in-process client tools replace). Plain JavaScript, so it runs on
// bare Node without a TypeScript loader. Started by the bench through StdioClientTransport.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "toolrelay-bench-noop", version: "1.0.0" });
server.registerTool("noop", { description: "Does nothing and answers ok" }, async () => ({ content: [{ type: "text", text: "ok" }] }));
await server.connect(new StdioServerTransport());
