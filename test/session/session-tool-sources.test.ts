/**
 * Tool sources in a session (over the scripted runtime): opened before runtime_start, their
 * tools registered with the plain ones, a change re-registered as a whole
 * (runtime_external_tools_update) and confirmed by a `tools-change` event, a bad change reported
 * with the previous set kept, a failed start that closes what opened, close() closing sources.
 */
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  createSession,
  defineTool,
  defineToolSource,
  type ClientTool,
  type OpenToolSource,
  type ToolrelayError,
} from "../../packages/toolrelay/src/index.js";
import { scriptedRuntime, sessionOn } from "./session-support.js";

const plain = defineTool({ name: "plain_tool", description: "A plain tool", inputSchema: z.object({}), execute: () => "plain" });
const named = (name: string, text = name): ClientTool =>
  defineTool({ name, description: `The ${name} tool`, inputSchema: { type: "object" }, execute: () => text });

/** A hand-made source whose tools the test changes, recording what the session did with it. */
function fakeSource(initial: ClientTool[], options: { failOpen?: Error; label?: string } = {}) {
  let tools = initial;
  const changeListeners: Array<() => void> = [];
  const errorListeners: Array<(error: ToolrelayError) => void> = [];
  const record = { opened: 0, closed: 0 };
  const source = defineToolSource({
    label: options.label ?? "fake source",
    async open() {
      record.opened++;
      if (options.failOpen) throw options.failOpen;
      const opened: OpenToolSource = {
        get tools() {
          return tools;
        },
        onToolsChanged: (listener) => void changeListeners.push(listener),
        onError: (listener) => void errorListeners.push(listener),
        async close() {
          record.closed++;
        },
      };
      return opened;
    },
  });
  return {
    source,
    record,
    change(next: ClientTool[]) {
      tools = next;
      for (const listener of changeListeners) listener();
    },
    fail(error: ToolrelayError) {
      for (const listener of errorListeners) listener(error);
    },
  };
}

describe("session: tool sources", () => {
  it("registers a source's tools beside the plain ones and runs them", async () => {
    const runtime = await scriptedRuntime({ script: async (turn) => void (await turn.callTool("from_source", {})) });
    const fake = fakeSource([named("from_source", "sourced")]);
    const session = await sessionOn(runtime, { tools: [plain, fake.source] });
    expect(runtime.registrations().map((registration) => registration.name)).toEqual(["plain_tool", "from_source"]);
    await session.send("go").result;
    expect(runtime.calls[0]!.response).toMatchObject({ result: { content: [{ type: "text", text: "sourced" }] } });
    expect(fake.record).toEqual({ opened: 1, closed: 0 });
    await session.close();
    expect(fake.record.closed).toBe(1);
  });

  it("a change is re-registered as a whole and confirmed with tools-change; the new tool runs", async () => {
    const runtime = await scriptedRuntime({ script: async (turn) => void (await turn.callTool("second", {})) });
    const fake = fakeSource([named("first")]);
    const session = await sessionOn(runtime, { tools: [plain, fake.source] });
    const changes: string[][] = [];
    session.on("tools-change", (event) => changes.push(event.names));
    fake.change([named("second")]);
    await vi.waitFor(() => expect(changes).toEqual([["plain_tool", "second"]]));
    expect(runtime.registrations().map((registration) => registration.name)).toEqual(["plain_tool", "second"]);
    const updates = runtime.frames.filter((record) => (record.frame as { type?: string }).type === "runtime_external_tools_update");
    expect(updates).toHaveLength(1);
    const outcomes: string[] = [];
    session.on("tool-call-end", (event) => outcomes.push(`${event.toolName}:${event.outcome}`));
    await session.send("go").result;
    expect(outcomes).toEqual(["second:ok"]);
    expect(session.pendingToolCalls).toBe(0);
  });

  it("a change that would duplicate a name is reported and the previous set stays", async () => {
    const runtime = await scriptedRuntime({ script: async () => undefined });
    const fake = fakeSource([named("first")]);
    const session = await sessionOn(runtime, { tools: [plain, fake.source] });
    const errors: ToolrelayError[] = [];
    session.on("error", (error) => errors.push(error));
    fake.change([named("plain_tool")]);
    await vi.waitFor(() => expect(errors.map((error) => error.code)).toEqual(["DUPLICATE_TOOL_NAME"]));
    expect(runtime.registrations().map((registration) => registration.name)).toEqual(["plain_tool", "first"]);
  });

  it("a source's own failure after start reaches the session's error event", async () => {
    const runtime = await scriptedRuntime({ script: async () => undefined });
    const fake = fakeSource([named("first")]);
    const session = await sessionOn(runtime, { tools: [fake.source] });
    const errors: ToolrelayError[] = [];
    session.on("error", (error) => errors.push(error));
    const { ToolrelayError: ErrorClass } = await import("../../packages/toolrelay/src/errors.js");
    fake.fail(new ErrorClass("TOOL_SOURCE_FAILED", "fake source exited"));
    expect(errors.map((error) => error.message)).toEqual(["fake source exited"]);
  });

  it("a source that fails to open fails createSession and closes the sources that did open; no runtime_start is sent", async () => {
    const runtime = await scriptedRuntime({ script: async () => undefined });
    const good = fakeSource([named("first")]);
    const bad = fakeSource([], { failOpen: new Error("spawn ENOENT"), label: "bad source" });
    await expect(
      createSession({
        backend: { kind: "local", url: runtime.url, pingIntervalMs: 0 },
        agent: { create: { model: "scripted/test" } },
        tools: [good.source, bad.source],
      }),
    ).rejects.toMatchObject({ code: "CONNECT_FAILED", message: expect.stringContaining("spawn ENOENT") });
    expect(good.record).toEqual({ opened: 1, closed: 1 });
    expect(runtime.frames.filter((record) => (record.frame as { type?: string }).type === "runtime_start")).toEqual([]);
  });

  it("two sources offering one name fail createSession with DUPLICATE_TOOL_NAME, both closed", async () => {
    const runtime = await scriptedRuntime({ script: async () => undefined });
    const one = fakeSource([named("same")]);
    const two = fakeSource([named("same")]);
    await expect(sessionOn(runtime, { tools: [one.source, two.source] })).rejects.toMatchObject({ code: "DUPLICATE_TOOL_NAME" });
    expect([one.record.closed, two.record.closed]).toEqual([1, 1]);
  });

  it("refuses an item that is neither a tool nor a source", async () => {
    const runtime = await scriptedRuntime({ script: async () => undefined });
    await expect(sessionOn(runtime, { tools: [plain, { open: () => undefined } as never] })).rejects.toMatchObject({
      code: "INVALID_TOOL_DEFINITION",
      message: expect.stringContaining("tools[1] was not made with defineTool() or mcpTools()"),
    });
  });
});
