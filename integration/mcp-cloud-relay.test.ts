/**
 * A local MCP server's tools used by a Cloud agent, executing at the caller: the SDK (this
 * process, which starts the real @modelcontextprotocol/server-filesystem as its child) ↔ the
 * reference relay (a process) ↔ the REAL Letta Code listener (a process, 0.32.18) ↔ the scripted
 * model (a process). The agent reads and writes files in a temp directory of THIS machine's
 * process tree, and the model's request shows the server's own description and schema.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession } from "../packages/toolrelay/src/index.js";
import { mcpTools } from "../packages/toolrelay/src/mcp/index.js";
import { RELAY_API_KEY, startCloudStack, type CloudStack } from "./support/cloud-stack.js";
import { FILESYSTEM_SERVER, processesWith } from "./support/mcp-processes.js";

const scratch = mkdtempSync(join(tmpdir(), "toolrelay-mcp-relay-"));
let stack: CloudStack;

beforeAll(async () => {
  stack = await startCloudStack({ listenerMode: "paired", envName: "toolrelay-mcp-relay" });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

describe("MCP tools across the relay with the real listener", () => {
  it("a Cloud agent reads and writes local files through server-filesystem; the model sees the server's description; close() ends the child", async () => {
    const root = mkdtempSync(join(scratch, "root-"));
    writeFileSync(join(root, "hello.txt"), "hello across the relay");
    const direct = new Client({ name: "direct", version: "1" });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [FILESYSTEM_SERVER, root], stderr: "ignore" }));
    const readTool = (await direct.listTools()).tools.find((tool) => tool.name === "read_text_file")!;
    await direct.close();

    const session = await createSession({
      backend: { kind: "cloud", apiKey: RELAY_API_KEY, baseUrl: stack.relayUrl, environment: { name: stack.envName } },
      agent: { create: { model: stack.modelHandle, name: "toolrelay-mcp-relay" } },
      tools: [mcpTools({ command: process.execPath, args: [FILESYSTEM_SERVER, root], name: "filesystem" })],
    });
    try {
      expect(processesWith(FILESYSTEM_SERVER, root)).toHaveLength(1);
      const result = await session.send(
        [
          `CALL read_text_file {"path":${JSON.stringify(join(root, "hello.txt"))}}`,
          `CALL write_file {"path":${JSON.stringify(join(root, "out.txt"))},"content":"written by a cloud agent"}`,
          "DESCRIBE read_text_file",
        ].join("\n"),
      ).result;
      expect(result.stopReason).toBe("end_turn");
      expect(result.text).toContain("done: hello across the relay | Successfully wrote to");
      expect(readFileSync(join(root, "out.txt"), "utf8")).toBe("written by a cloud agent");
      const offeredLine = result.text.split("\n").find((line) => line.startsWith("offered read_text_file: "))!;
      const offered = JSON.parse(offeredLine.slice("offered read_text_file: ".length)) as {
        description: string;
        parameters: Record<string, unknown>;
      };
      expect(offered.description).toBe(readTool.description);
      const { $schema: _ignored, ...schema } = readTool.inputSchema as Record<string, unknown>;
      expect(offered.parameters).toEqual(schema);
    } finally {
      await session.close();
    }
    expect(processesWith(FILESYSTEM_SERVER, root)).toEqual([]);
  });
});
