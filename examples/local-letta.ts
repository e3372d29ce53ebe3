/**
 * toolrelay against a real Letta Code app-server on this machine.
 *
 *   letta server --listen                 # prints "Listening on ws://127.0.0.1:PORT"
 *   LETTA_APP_SERVER_URL=ws://127.0.0.1:PORT/ws LETTA_MODEL=openai/gpt-5 npx tsx examples/local-letta.ts
 *
 * Or let the SDK start the server: LETTA_SPAWN=1 (needs `letta` on PATH).
 * With `--ws-auth capability-token`, pass the token in LETTA_APP_SERVER_TOKEN
 * (sent as an Authorization header, never in the URL).
 */
import { z } from "zod";
import { createSession, defineTool, type BackendOptions } from "toolrelay";

const openFiles = defineTool({
  name: "list_open_files",
  description: "The files the user has open in this application",
  inputSchema: z.object({ limit: z.number().int().min(1).max(50).default(10).describe("How many files to list") }),
  annotations: { readOnlyHint: true },
  timeoutMs: 5_000,
  execute: ({ limit }) => ["packages/toolrelay/src/index.ts", "README.md", "package.json"].slice(0, limit),
});

const url = process.env.LETTA_APP_SERVER_URL;
const backend: BackendOptions =
  process.env.LETTA_SPAWN === "1"
    ? { kind: "local", spawn: true }
    : { kind: "local", url: url ?? "", token: process.env.LETTA_APP_SERVER_TOKEN };
if (backend.kind === "local" && !backend.spawn && !url) {
  console.error("Set LETTA_APP_SERVER_URL (e.g. ws://127.0.0.1:4500/ws) or LETTA_SPAWN=1.");
  process.exit(2);
}

await using session = await createSession({
  backend,
  agent: process.env.LETTA_AGENT_ID
    ? { id: process.env.LETTA_AGENT_ID }
    : { create: { model: process.env.LETTA_MODEL ?? "openai/gpt-5", name: "toolrelay-example" } },
  conversation: "new",
  tools: [openFiles],
  workspace: "isolated",
});
session.on("tool-call-end", (event) => console.error(`[tool] ${event.toolName}: ${event.outcome} (${event.durationMs} ms)`));

const turn = session.send(process.argv[2] ?? "Which files do I have open? Use the list_open_files tool.");
for await (const event of turn) {
  if (event.type === "assistant") process.stdout.write(event.text);
  if (event.type === "stop") process.stdout.write(`\n[${event.stopReason}]\n`);
}
