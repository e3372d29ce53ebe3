import { existsSync } from "node:fs";
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createSession, defineTool, type SessionOptions } from "../../src/index.js";
import { workspacesRoot } from "../../src/session/isolated-workspace.js";
import { rawRuntime, scriptedRuntime, sessionOn } from "./session-support.js";

const base: SessionOptions = { backend: { kind: "local", url: "ws://127.0.0.1:9/ws" }, agent: { id: "agent-1" } };

describe("createSession: bad options are refused before anything starts", () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ["no backend", { agent: { id: "a" } }, /backend is required/],
    ["unknown backend kind", { ...base, backend: { kind: "remote" } }, /kind must be/],
    ["no agent", { backend: base.backend }, /agent is required/],
    ["empty agent id", { ...base, agent: { id: " " } }, /agent.id/],
    ["agent without model", { ...base, agent: { create: {} } }, /model/],
    ["empty conversation", { ...base, conversation: "" }, /conversation/],
    ["negative timeout", { ...base, toolTimeoutMs: -1 }, /toolTimeoutMs/],
    ["NaN input limit", { ...base, maxInputBytes: Number.NaN }, /maxInputBytes/],
    ["tools not an array", { ...base, tools: "get_weather" }, /tools must be an array/],
    ["bad workspace", { ...base, workspace: "shared" }, /workspace/],
    ["local without url or spawn", { ...base, backend: { kind: "local" } }, /exactly one of `url`/],
    ["local url with a token query", { ...base, backend: { kind: "local", url: "ws://127.0.0.1:9/ws?token=x" } }, /token/],
  ];
  for (const [name, options, message] of cases) {
    it(`refuses ${name}`, async () => {
      await expect(createSession(options as SessionOptions)).rejects.toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringMatching(message) });
    });
  }

  it("refuses two tools with one name", async () => {
    const tool = defineTool({ name: "twin", description: "x", inputSchema: z.object({}), execute: () => "" });
    await expect(createSession({ ...base, tools: [tool, tool] })).rejects.toMatchObject({ code: "DUPLICATE_TOOL_NAME" });
  });

  it("fails at connect, not mid-turn, when the runtime refuses runtime_start", async () => {
    const server = await rawRuntime((frame, reply) => {
      if (frame.type === "runtime_start") {
        reply({ type: "runtime_start_response", request_id: frame.request_id, success: false, runtime: null, agent: null, conversation: null, error: "Agent agent-x not found" });
      }
    });
    await expect(createSession({ backend: { kind: "local", url: server.url }, agent: { id: "agent-x" } })).rejects.toMatchObject({
      code: "REQUEST_FAILED",
      message: expect.stringContaining("Agent agent-x not found"),
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
