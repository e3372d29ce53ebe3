/**
 * An ACP agent over stdio: an editor (Zed, ...) starts this process and talks
 * ACP on its stdin/stdout; every ACP session is a toolrelay session with a
 * Letta Code runtime, whose client tools include the editor tools
 * (`read_editor_buffer`, `write_via_editor`) that run through the editor.
 *
 *   TOOLRELAY_BACKEND_URL=ws://127.0.0.1:4500/ws TOOLRELAY_MODEL=openai/gpt-5 npx tsx examples/acp-agent/main.ts
 *
 * Configuration: examples/acp-agent/config.ts and docs/acp.md. stdout carries
 * only ACP messages; diagnostics go to stderr (never prompts, tool inputs or
 * results).
 */
import { Readable, Writable } from "node:stream";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import { startAcpAgent } from "toolrelay/acp";
import { configFromEnv, sessionOptionsFor } from "./config.js";

const log = (message: string) => process.stderr.write(`[toolrelay-acp] ${message}\n`);

let config: ReturnType<typeof configFromEnv>;
try {
  config = configFromEnv(process.env);
} catch (error) {
  log(`configuration: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
}

const stream = ndJsonStream(
  Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
  Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
);

const agent = startAcpAgent(stream, {
  agentInfo: { name: "toolrelay-acp-example", title: "Letta (toolrelay)", version: "0.1.0" },
  editor: { requestTimeoutMs: config.editorTimeoutMs, requireExpectedHash: config.requireExpectedHash },
  session: (context) => {
    log(
      `session ${context.sessionId}: roots ${context.roots.join(", ")}; editor tools: ${context.editorTools.map((tool) => tool.name).join(", ") || "none"}`,
    );
    return sessionOptionsFor(config, context);
  },
  onError: (error, where) =>
    log(
      `${where.phase}${where.sessionId ? ` (session ${where.sessionId})` : ""}: ${error instanceof Error ? error.message : String(error)}`,
    ),
});

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  log(`${signal}: closing`);
  void agent.close().finally(() => process.exit(0));
};
process.once("SIGTERM", () => stop("SIGTERM"));
process.once("SIGINT", () => stop("SIGINT"));

await agent.closed;
log("connection closed");
