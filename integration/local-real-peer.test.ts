/**
 * The local backend against the REAL Letta Code app-server (0.32.18, local
 * backend) with a scripted OpenAI-compatible model, each a separate process on
 * loopback. See CONTRIBUTING.md, "The real peers".
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type Session } from "../packages/toolrelay/src/index.js";
import { createSessionOnLink } from "../packages/toolrelay/src/session/create-session.js";
import type { LinkSessionOptions } from "../packages/toolrelay/src/session/session-options.js";
import { LocalLink } from "../packages/toolrelay/src/transport/local-link.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ModelRequest, type ScriptedModelServer } from "../test/support/scripted-model-server.js";
import { letTimePass } from "../test/support/wait.js";

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
    agent: { create: { model: model.modelHandle, name: "toolrelay-integration" } },
    ...options,
  });
  sessions.push(session);
  return session;
}

/** The model calls `name` with `args` on the first request of a turn, then reports the tool result. */
function callOnce(name: string, args: Record<string, unknown>) {
  return (request: ModelRequest) => {
    if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}` };
    return { text: "Calling the tool.", toolCalls: [{ name, arguments: args }] };
  };
}

const weather = defineTool({
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: z.object({
    city: z.string().min(1).describe("City name, e.g. Paris"),
    unit: z.enum(["celsius", "fahrenheit"]).default("celsius").describe("Temperature unit"),
  }),
  annotations: { readOnlyHint: true },
  execute: ({ city, unit }) => `sunny and 21 degrees ${unit} in ${city}`,
});

describe("local backend against the real Letta Code app-server", () => {
  it("runs a client tool in this process; its text reaches the model's next request; the schema keeps the zod descriptions", async () => {
    model.setScript(callOnce("get_weather", { city: "Paris" }));
    const session = await open({ tools: [weather] });
    const from = model.requests.length;
    const turn = session.send("What is the weather in Paris?");
    const types: string[] = [];
    for await (const event of turn) types.push(event.type);
    const result = await turn.result;
    expect(result.stopReason).toBe("end_turn");
    expect(result.text).toContain("Calling the tool.");
    expect(result.text).toContain("done: sunny and 21 degrees celsius in Paris");
    expect(types).toEqual(expect.arrayContaining(["assistant", "tool-call", "tool-result", "stop"]));
    const followUp = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!;
    expect(followUp.toolResults[0]!.text).toBe("sunny and 21 degrees celsius in Paris");
    const offered = model.requests[from]!.tools.find((tool) => tool.function.name === "get_weather")!;
    const parameters = offered.function.parameters as {
      properties: Record<string, { description?: string; enum?: string[] }>;
      required?: string[];
    };
    expect(parameters.properties.city!.description).toBe("City name, e.g. Paris");
    expect(parameters.properties.unit!.description).toBe("Temperature unit");
    expect(parameters.properties.unit!.enum).toEqual(["celsius", "fahrenheit"]);
    expect(parameters.required).toContain("city");
  });

  it("a throwing handler's message reaches the model as an error", async () => {
    const failing = defineTool({
      name: "read_config",
      description: "Reads the config",
      inputSchema: z.object({}),
      execute: () => {
        throw new Error("config file is locked");
      },
    });
    model.setScript(callOnce("read_config", {}));
    const session = await open({ tools: [failing] });
    const from = model.requests.length;
    const result = await session.send("read it").result;
    const toolEvent = result.events.find((event) => event.type === "tool-result");
    expect(toolEvent).toMatchObject({ isError: true, owner: "client", toolName: "read_config" });
    const followUp = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!;
    expect(followUp.toolResults[0]!.text).toContain("config file is locked");
  });

  it("wrong-typed input never reaches the handler and the failing path reaches the model", async () => {
    let calls = 0;
    const counter = defineTool({
      name: "add_items",
      description: "Adds items",
      inputSchema: z.object({ count: z.number().int().describe("How many") }),
      execute: () => `added ${++calls}`,
    });
    model.setScript(callOnce("add_items", { count: "three" }));
    const session = await open({ tools: [counter] });
    const outcomes: string[] = [];
    session.on("tool-call-end", (event) => outcomes.push(event.outcome));
    const from = model.requests.length;
    await session.send("add three").result;
    expect(calls).toBe(0);
    expect(outcomes).toEqual(["invalid-input"]);
    const text = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!.toolResults[0]!.text;
    expect(text).toContain("count");
    expect(text.toLowerCase()).toContain("number");
  });

  it("a tool the session does not have is answered with a clear error naming it", async () => {
    // Registration drift (e.g. another controller re-registered): the runtime routes a tool this
    // session has no callback for. Register it behind the session's back on its own link.
    const link = new LocalLink({ url: server.url });
    // mode "unrestricted": the subject is the external request for a tool the session lacks. In
    // the default mode the runtime asks can_use_tool first, and the session (no canUseTool)
    // denies a tool that is not one of its own before any request is sent.
    const session = await open({ backend: { kind: "link", link }, tools: [weather], mode: "unrestricted" });
    const applied = new Promise<void>((resolve) => {
      const onFrame = (frame: { type: string; request_id?: unknown }): void => {
        if (frame.type !== "runtime_external_tools_update_response" || frame.request_id !== "drift-1") return;
        link.off("frame", onFrame);
        resolve();
      };
      link.on("frame", onFrame);
    });
    const extra = { name: "ghost_tool", description: "Not in the session", parameters: { type: "object", properties: {} } };
    link.send({
      type: "runtime_external_tools_update",
      request_id: "drift-1",
      updates: [
        {
          runtimes: [{ agent_id: session.agentId, conversation_id: session.conversationId }],
          external_tools: [{ tools: [{ name: "get_weather", description: "x", parameters: { type: "object" } }, extra] }],
        },
      ],
    });
    await applied; // the runtime answers once it has replaced the set
    model.setScript(callOnce("ghost_tool", {}));
    const outcomes: string[] = [];
    session.on("tool-call-end", (event) => outcomes.push(event.outcome));
    const from = model.requests.length;
    await session.send("call the ghost").result;
    expect(outcomes).toEqual(["unknown-tool"]);
    const text = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!.toolResults[0]!.text;
    expect(text).toContain("ghost_tool");
    expect(text).toContain("get_weather");
  });

  it("a call past its 500 ms timeout is answered with the timeout text and the handler's signal is aborted", async () => {
    let abortReason: unknown;
    const slow = defineTool({
      name: "deploy",
      description: "Deploys (slowly)",
      inputSchema: z.object({}),
      timeoutMs: 500,
      execute: (_input, { signal }) =>
        new Promise((resolve) => {
          signal.addEventListener("abort", () => {
            abortReason = signal.reason;
            setTimeout(() => resolve("finished anyway"), 50);
          });
        }),
    });
    model.setScript(callOnce("deploy", {}));
    const session = await open({ tools: [slow] });
    const late: string[] = [];
    session.on("tool-call-late", (event) => late.push(event.toolName));
    const from = model.requests.length;
    const started = Date.now();
    const result = await session.send("deploy").result;
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(result.stopReason).toBe("end_turn");
    expect(abortReason).toMatchObject({ kind: "timeout" });
    const text = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!.toolResults[0]!.text;
    expect(text).toContain("timed out after 500 ms");
    expect(text).toContain("may have applied its effects");
    await expect.poll(() => late).toEqual(["deploy"]);
  });

  it("two sessions with the same tool names and concurrent calls are each answered in their own scope", async () => {
    const who = (name: string, delayMs: number) =>
      defineTool({
        name: "whoami",
        description: "Which session answers",
        inputSchema: z.object({ caller: z.string() }),
        execute: async ({ caller }) => {
          await letTimePass(delayMs); // the tool's work takes time, on purpose
          return `${name} answered ${caller}`;
        },
      });
    model.setScript((request) => {
      if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults[0]!.text}` };
      return { toolCalls: [{ name: "whoami", arguments: { caller: request.lastUserText } }] };
    });
    const [first, second] = await Promise.all([open({ tools: [who("A", 150)] }), open({ tools: [who("B", 10)] })]);
    const [resultA, resultB] = await Promise.all([first.send("alpha").result, second.send("beta").result]);
    expect(resultA.text).toContain("A answered alpha");
    expect(resultB.text).toContain("B answered beta");
  });

  it("abort() during a running tool aborts its signal and the next turn starts promptly", async () => {
    let entered!: () => void;
    const running = new Promise<void>((resolve) => (entered = resolve));
    let abortReason: unknown;
    const hang = defineTool({
      name: "long_job",
      description: "Runs until aborted",
      inputSchema: z.object({}),
      execute: (_input, { signal }) =>
        new Promise((resolve) => {
          entered();
          signal.addEventListener("abort", () => {
            abortReason = signal.reason;
            resolve("stopped");
          });
        }),
    });
    model.setScript((request) => {
      if (request.lastUserText.includes("again")) return { text: "second turn answered" };
      if (request.lastMessage?.role === "tool") return { text: "after tool" };
      return { toolCalls: [{ name: "long_job", arguments: {} }] };
    });
    const session = await open({ tools: [hang] });
    const first = session.send("start the long job");
    await running;
    await first.abort();
    expect(abortReason).toMatchObject({ kind: "cancelled" });
    const firstResult = await first.result;
    expect(firstResult.stopReason).toBe("cancelled");
    const started = Date.now();
    const second = await session.send("again please").result;
    expect(second.text).toContain("second turn answered");
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
