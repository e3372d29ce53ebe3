import { existsSync } from "node:fs";
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createSession, defineTool, type SessionOptions, type ToolrelayError } from "../../packages/toolrelay/src/index.js";
import { badSessionOptions } from "./bad-session-options.js";
import { workspacesRoot } from "../../packages/toolrelay/src/session/isolated-workspace.js";
import { rawRuntime, scriptedRuntime, sessionOn } from "./session-support.js";

const base: SessionOptions = { backend: { kind: "local", url: "ws://127.0.0.1:9/ws" }, agent: { id: "agent-1" } };

describe("createSession: bad options are refused before anything starts", () => {
  // Nothing listens on port 9 here; the child process below runs the same table against a live runtime.
  const url = "ws://127.0.0.1:9/ws";
  for (const [name, options, path] of badSessionOptions(url)) {
    it(`refuses ${name} with INVALID_OPTIONS naming the option`, async () => {
      await expect(createSession(options as SessionOptions)).rejects.toMatchObject({
        code: "INVALID_OPTIONS",
        message: expect.stringMatching(path),
      });
    });
  }

  it("leaves no unhandled rejection after any of them (a child process with an unhandledRejection hook exits 0)", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./fixtures/bad-options-child.ts", import.meta.url))], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect({ code, output }).toMatchObject({
      code: 0,
      output: expect.stringMatching(/refused with INVALID_OPTIONS before anything opened, no unhandled rejection/),
    });
  }, 30_000);

  it("names every wrong option, not only the first", async () => {
    const error = await createSession({ ...base, mode: "default", tool: [], clientInfo: { name: 5 } } as unknown as SessionOptions).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "INVALID_OPTIONS" });
    expect((error as ToolrelayError).details?.issues).toEqual([
      'options.mode: must be "standard", "acceptEdits", "unrestricted" or "strict"',
      "options.clientInfo.name: must be a string",
      'options.tool: is not an option (did you mean "tools"?)',
    ]);
  });

  it("keeps the cause of a refused address: ECONNREFUSED in the message and as the cause's code", async () => {
    const error = await createSession({ ...base, backend: { kind: "local", url: "ws://127.0.0.1:9/ws", reconnect: false } }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({
      code: "CONNECT_FAILED",
      message: expect.stringContaining("ECONNREFUSED"),
      cause: { code: "ECONNREFUSED" },
    });
  });

  it("keeps the cause of an unresolvable host: the resolver's code in the message and as the cause's code", async () => {
    const error = (await createSession({
      ...base,
      backend: { kind: "local", url: "ws://nowhere.invalid:4500/ws", reconnect: false },
    }).catch((caught: unknown) => caught)) as ToolrelayError & { cause?: { code?: string } };
    expect(error).toMatchObject({ code: "CONNECT_FAILED" });
    expect(error.cause?.code).toMatch(/^(ENOTFOUND|EAI_AGAIN)$/);
    expect(error.message).toContain(error.cause!.code!);
  });

  it("refuses two tools with one name", async () => {
    const tool = defineTool({ name: "twin", description: "x", inputSchema: z.object({}), execute: () => "" });
    await expect(createSession({ ...base, tools: [tool, tool] })).rejects.toMatchObject({ code: "DUPLICATE_TOOL_NAME" });
  });

  it("fails at connect, not mid-turn, when the runtime refuses runtime_start", async () => {
    const server = await rawRuntime((frame, reply) => {
      if (frame.type === "runtime_start") {
        reply({
          type: "runtime_start_response",
          request_id: frame.request_id,
          success: false,
          runtime: null,
          agent: null,
          conversation: null,
          error: "Agent agent-x not found",
        });
      }
    });
    await expect(createSession({ backend: { kind: "local", url: server.url }, agent: { id: "agent-x" } })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringContaining("Agent agent-x not found"),
      details: { agentId: "agent-x" },
    });
  });

  it("a runtime_start refusal that names nothing missing stays REQUEST_FAILED (NOT_FOUND is only for a named agent or conversation)", async () => {
    const server = await rawRuntime((frame, reply) => {
      if (frame.type === "runtime_start") {
        reply({
          type: "runtime_start_response",
          request_id: frame.request_id,
          success: false,
          runtime: null,
          agent: null,
          conversation: null,
          error: "Agent store is locked",
        });
      }
    });
    await expect(createSession({ backend: { kind: "local", url: server.url }, agent: { id: "agent-x" } })).rejects.toMatchObject({
      code: "REQUEST_FAILED",
      message: expect.stringContaining("Agent store is locked"),
    });
  });

  it("fails with REQUEST_TIMEOUT when the runtime silently drops runtime_start (as the real one does with a frame it rejects)", async () => {
    const server = await rawRuntime(() => undefined);
    await expect(
      createSession({ backend: { kind: "local", url: server.url }, agent: { id: "agent-x" }, requestTimeoutMs: 200 }),
    ).rejects.toMatchObject({ code: "REQUEST_TIMEOUT" });
    expect(server.connections()).toBe(0);
  });
});

describe("isolated workspace", () => {
  it("gives the runtime a fresh empty cwd and removes it on close; stale ones are swept", async () => {
    const stale = join(workspacesRoot(), "999999999-stale");
    await mkdir(stale, { recursive: true });
    const runtime = await scriptedRuntime({ script: () => undefined });
    const session = await sessionOn(runtime, { workspace: "isolated" });
    const start = runtime.frames.find((record) => record.type === "runtime_start")!.frame as { cwd: string };
    expect(start.cwd.startsWith(workspacesRoot())).toBe(true);
    expect(await readdir(start.cwd)).toEqual([]);
    expect(existsSync(stale)).toBe(false);
    await session.close();
    expect(existsSync(start.cwd)).toBe(false);
  });
});
