/**
 * An MCP server's tools inside a session (over the scripted runtime): the session's per-call
 * bounds apply to them like to any client tool — an input over 1 MiB is refused unread, the
 * server never sees it — and close() ends the server.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { mcpTools } from "../../packages/toolrelay/src/mcp/index.js";
import { scriptedRuntime, sessionOn } from "../session/session-support.js";

const SERVER = new URL("../fixtures/mcp/test-mcp-server.mjs", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "toolrelay-mcp-session-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("MCP tools in a session", () => {
  it("an input over maxInputBytes (1 MiB) is refused before the server is called; a normal one runs", async () => {
    const eventLog = join(scratch, "bounds.log");
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        await turn.callTool("echo", { text: "x".repeat(1_100_000) });
        await turn.callTool("echo", { text: "small" });
      },
    });
    const session = await sessionOn(runtime, {
      tools: [mcpTools({ command: process.execPath, args: [SERVER], env: { EVENT_LOG: eventLog }, name: "test" })],
    });
    const outcomes: string[] = [];
    session.on("tool-call-end", (event) => outcomes.push(event.outcome));
    await session.send("echo twice").result;
    expect(outcomes).toEqual(["input-too-large", "ok"]);
    expect(runtime.calls[0]!.result!.toolReturn).toContain("over the limit of 1048576 bytes");
    expect(runtime.calls[1]!.result!.toolReturn).toBe("echo: small");
    const pid = Number(
      readFileSync(eventLog, "utf8")
        .split("\n")
        .find((line) => line.startsWith("started "))!
        .split(" ")[1],
    );
    await session.close();
    expect(existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ")).toBe(false);
  });
});
