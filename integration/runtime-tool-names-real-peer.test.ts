/**
 * The runtime's own tool names against the REAL Letta Code app-server (0.32.18, local backend) and
 * a scripted model that records what it is offered: RUNTIME_TOOL_NAMES still covers every tool the
 * runtime offers the model besides ours, and a client tool that takes one of those names with
 * `overridesRuntimeTool: true` does replace the runtime's tool and runs in this process.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type Session } from "../packages/toolrelay/src/index.js";
import { createSessionOnLink } from "../packages/toolrelay/src/session/create-session.js";
import type { LinkSessionOptions } from "../packages/toolrelay/src/session/session-options.js";
import { RUNTIME_TOOL_NAMES } from "../packages/toolrelay/src/tools/index.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ModelRequest, type ScriptedModelServer } from "../test/support/scripted-model-server.js";

let model: ScriptedModelServer;
let server: LettaAppServer;
const sessions: Session[] = [];

beforeAll(async () => {
  model = await startScriptedModelServer();
  server = await startLettaAppServer({ modelUrl: model.url });
}, 60_000);

afterAll(async () => {
  for (const session of sessions.splice(0)) await session.close();
  await server?.stop();
  await model?.close();
});

beforeEach(() => {
  model.resetScript();
});

async function open(options: Partial<LinkSessionOptions>): Promise<Session> {
  const session = await createSessionOnLink({
    backend: { kind: "local", url: server.url },
    agent: { create: { model: model.modelHandle, name: "toolrelay-runtime-tool-names" } },
    ...options,
  });
  sessions.push(session);
  return session;
}

const weather = defineTool({
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: z.object({ city: z.string() }),
  execute: ({ city }) => `sunny in ${city}`,
});

describe("the runtime's own tool names (real app-server)", () => {
  it("RUNTIME_TOOL_NAMES covers every tool the runtime offers the model besides the client's", async () => {
    const session = await open({ tools: [weather] });
    const from = model.requests.length;
    await session.send("hello").result;
    const request = model.requests[from]!;
    const builtIn = request.toolNames.filter((name) => name !== "get_weather");
    // Not vacuous: the runtime offers its file and shell tools, and ours beside them.
    expect(request.toolNames).toContain("get_weather");
    expect(builtIn).toEqual(expect.arrayContaining(["Read", "Write", "Bash"]));
    expect(builtIn.filter((name) => !RUNTIME_TOOL_NAMES.has(name))).toEqual([]);
  });

  it("a client tool named Task (the runtime's own name of its Agent tool) takes the Agent tool away from the model", async () => {
    const task = defineTool({
      name: "Task",
      description: "CLIENT-TASK: files a task in the client's tracker",
      inputSchema: z.object({ title: z.string() }),
      overridesRuntimeTool: true,
      execute: ({ title }) => `filed ${title}`,
    });
    const session = await open({ tools: [task] });
    const from = model.requests.length;
    await session.send("hello").result;
    const names = model.requests[from]!.toolNames;
    expect(names).toContain("Task");
    expect(names).not.toContain("Agent");
  });

  it("with overridesRuntimeTool: true, the client's Read replaces the runtime's and runs in this process", async () => {
    const calls: Array<{ input: unknown; toolCallId: string }> = [];
    const read = defineTool({
      name: "Read",
      description: "CLIENT-READ: reads a file from the client's own store",
      inputSchema: z.object({ file_path: z.string() }),
      overridesRuntimeTool: true,
      execute: (input, { toolCallId }) => {
        calls.push({ input, toolCallId });
        return `client store: contents of ${input.file_path}`;
      },
    });
    // A file the runtime's own Read would read: the model must get the client's text instead.
    const realFile = join(server.home, "real.txt");
    await writeFile(realFile, "RUNTIME-READ-CONTENTS");
    expect(await readFile(realFile, "utf8")).toBe("RUNTIME-READ-CONTENTS");
    model.setScript((request: ModelRequest) => {
      if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}` };
      return { toolCalls: [{ name: "Read", arguments: { file_path: realFile } }] };
    });
    const session = await open({ tools: [read] });
    const from = model.requests.length;
    const result = await session.send("read the file").result;

    expect(result.stopReason).toBe("end_turn");
    const first = model.requests[from]!;
    const offeredReads = first.tools.filter((tool) => tool.function.name === "Read");
    expect(offeredReads).toHaveLength(1);
    expect(offeredReads[0]!.function.description).toBe("CLIENT-READ: reads a file from the client's own store");
    expect(calls).toEqual([{ input: { file_path: realFile }, toolCallId: expect.any(String) }]);
    const followUp = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!;
    expect(followUp.toolResults[0]!.text).toBe(`client store: contents of ${realFile}`);
    expect(followUp.toolResults[0]!.text).not.toContain("RUNTIME-READ-CONTENTS");
    expect(result.events).toContainEqual(
      expect.objectContaining({ type: "tool-result", toolName: "Read", owner: "client", isError: false }),
    );
  });
});
