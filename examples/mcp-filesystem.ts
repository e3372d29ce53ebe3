/**
 * An MCP server's tools as client tools: the real @modelcontextprotocol/server-filesystem,
 * started by the session as a child process rooted at a scratch directory, used by an agent
 * turn. The "model" is the scripted runtime of `toolrelay/testing` (no account, no model);
 * swap the backend for `{ kind: "local", url }` or `{ kind: "cloud", ... }` and the same tools
 * run here, at the caller.
 *
 *   npx tsx examples/mcp-filesystem.ts
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createSession } from "toolrelay";
import { mcpTools } from "toolrelay/mcp";
import { startScriptedRuntime } from "toolrelay/testing";

const root = mkdtempSync(join(tmpdir(), "toolrelay-mcp-example-"));
writeFileSync(join(root, "todo.txt"), "buy milk\n");
// The server's entry point, run with this Node (no npx: nothing is downloaded, no wrapper process).
const require = createRequire(import.meta.url);
const serverEntry = join(dirname(require.resolve("@modelcontextprotocol/server-filesystem/package.json")), "dist/index.js");

const runtime = await startScriptedRuntime({
  script: async (turn) => {
    const read = await turn.callTool("fs_read_text_file", { path: join(root, "todo.txt") });
    const text = read.content.map((part) => ("text" in part ? part.text : "")).join("");
    await turn.callTool("fs_write_file", { path: join(root, "todo.txt"), content: `${text}call mum\n` });
    await turn.say(`The list had: ${text.trim()}. I added a line.`);
  },
});

try {
  await using session = await createSession({
    backend: { kind: "local", url: runtime.url },
    agent: { create: { model: "scripted/demo", name: "mcp-example" } },
    tools: [
      // Only PATH and what `env` names reach the child; it ends with the session.
      mcpTools({ command: process.execPath, args: [serverEntry, root], name: "filesystem", prefix: "fs_" }),
    ],
  });
  session.on("tool-call-end", (event) => console.log(`  [tool] ${event.toolName}: ${event.outcome} in ${event.durationMs} ms`));
  const result = await session.send("Add 'call mum' to my todo list").result;
  console.log(result.text);
} finally {
  await runtime.close();
  rmSync(root, { recursive: true, force: true });
}
