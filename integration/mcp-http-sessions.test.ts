/**
 * mcpTools({ url }) against a real MCP Streamable HTTP server process (the SDK's McpServer with
 * stateful sessions, integration/fixtures/mcp-http-session-server.mjs, which counts its live
 * sessions): closing a connection ends the server's session with MCP's HTTP DELETE, whether the
 * source is opened directly or by a session; a server that never answers the DELETE does not hold
 * close() past its bound.
 */
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createSession } from "../packages/toolrelay/src/index.js";
import { SESSION_END_TIMEOUT_MS } from "../packages/toolrelay/src/mcp/mcp-connection.js";
import { mcpTools } from "../packages/toolrelay/src/mcp/index.js";
import { startScriptedRuntime, type ScriptedRuntime } from "../packages/toolrelay/src/testing/index.js";
import { startTsxProcess, type TsxProcess } from "./support/tsx-process.js";

const SERVER = fileURLToPath(new URL("./fixtures/mcp-http-session-server.mjs", import.meta.url));
const started: Array<{ stop(): Promise<void> } | { close(): Promise<void> }> = [];

afterEach(async () => {
  for (const item of started.splice(0).reverse()) await ("stop" in item ? item.stop() : item.close());
});

async function startServer(env: Record<string, string> = {}): Promise<{ url: string; sessions(): Promise<SessionCount> }> {
  const server: TsxProcess = startTsxProcess(SERVER, [], env);
  started.push(server);
  const [, url] = await server.waitForLine(/listening on (http:\S+)/);
  return { url: url!, sessions: async () => (await fetch(new URL("/sessions", url))).json() as Promise<SessionCount> };
}

interface SessionCount {
  live: number;
  opened: number;
  terminated: number;
}

const signal = () => new AbortController().signal;

describe("an MCP Streamable HTTP connection ends its server session", () => {
  it("three opens and closes leave no live session on the server", async () => {
    const server = await startServer();
    const source = mcpTools({ url: server.url });
    for (let round = 1; round <= 3; round++) {
      const opened = await source.open({ signal: signal() });
      expect(opened.tools.map((tool) => tool.name)).toEqual(["ping"]);
      expect(await server.sessions()).toMatchObject({ live: 1, opened: round });
      await opened.close();
      expect(await server.sessions()).toEqual({ live: 0, opened: round, terminated: round });
    }
  });

  it("session.close() ends it too", async () => {
    const server = await startServer();
    const runtime: ScriptedRuntime = await startScriptedRuntime({ script: async (turn) => void (await turn.say("ok")) });
    started.push(runtime);
    const session = await createSession({
      backend: { kind: "local", url: runtime.url, pingIntervalMs: 0 },
      agent: { create: { model: "scripted/test" } },
      tools: [mcpTools({ url: server.url, prefix: "remote_" })],
    });
    expect(runtime.registrations().map((tool) => tool.name)).toContain("remote_ping");
    expect(await server.sessions()).toMatchObject({ live: 1 });
    await session.close();
    expect(await server.sessions()).toEqual({ live: 0, opened: 1, terminated: 1 });
  });

  it("a server that never answers the DELETE: close() gives up after its bound and resolves", async () => {
    const server = await startServer({ HANG_DELETE: "1" });
    const opened = await mcpTools({ url: server.url }).open({ signal: signal() });
    const startedAt = performance.now();
    await opened.close();
    const took = performance.now() - startedAt;
    expect(took).toBeGreaterThanOrEqual(SESSION_END_TIMEOUT_MS - 50);
    expect(took).toBeLessThan(SESSION_END_TIMEOUT_MS + 5_000);
    expect(await server.sessions()).toMatchObject({ live: 1, terminated: 0 });
  });
});
