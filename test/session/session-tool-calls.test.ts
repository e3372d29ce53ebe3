import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { defineTool, type ToolCallEndEvent, type TurnEvent } from "../../packages/toolrelay/src/index.js";
import { LocalLink } from "../../packages/toolrelay/src/transport/local-link.js";
import { until } from "../support/wait.js";
import { deferred, scriptedRuntime, sessionOn } from "./session-support.js";

const weather = defineTool({
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: z.object({ city: z.string().describe("City name, e.g. Paris") }),
  annotations: { readOnlyHint: true },
  execute: ({ city }) => `sunny in ${city}`,
});

/** A tool that runs until its signal aborts: `entered` resolves once it runs, `reasons` holds the abort reasons. */
function hangingTool() {
  const entered = deferred();
  const reasons: unknown[] = [];
  const tool = defineTool({
    name: "hang",
    description: "Waits for abort",
    inputSchema: z.object({}),
    execute: (_input, { signal }) =>
      new Promise((resolve) => {
        entered.resolve();
        signal.addEventListener("abort", () => {
          reasons.push(signal.reason);
          resolve("aborted");
        });
      }),
  });
  return { tool, entered: entered.promise, reasons };
}

describe("session: client tool calls over the scripted runtime", () => {
  it("runs the tool in this process and keeps narration around the call, in order", async () => {
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        await turn.say("Checking. ");
        const result = await turn.callTool("get_weather", { city: "Paris" });
        await turn.say(`Result: ${result.toolReturn}`);
      },
    });
    const session = await sessionOn(runtime, { tools: [weather] });
    const ends: ToolCallEndEvent[] = [];
    session.on("tool-call-end", (event) => ends.push(event));
    const events: TurnEvent[] = [];
    const turn = session.send("weather?");
    for await (const event of turn) events.push(event);
    const result = await turn.result;
    expect(result.text).toBe("Checking. Result: sunny in Paris");
    expect(result.stopReason).toBe("end_turn");
    expect(events.map((event) => event.type)).toEqual(["assistant", "tool-call", "tool-result", "assistant", "stop"]);
    expect(events[1]).toMatchObject({ type: "tool-call", toolName: "get_weather", owner: "client", input: { city: "Paris" } });
    expect(runtime.calls).toHaveLength(1);
    expect(runtime.calls[0]!.response).toEqual({
      type: "external_tool_call_response",
      request_id: runtime.calls[0]!.requestId,
      result: { content: [{ type: "text", text: "sunny in Paris" }] },
    });
    expect(ends).toEqual([expect.objectContaining({ toolName: "get_weather", outcome: "ok", requestIds: [runtime.calls[0]!.requestId] })]);
  });

  it("reports a throwing tool to the model as an error result", async () => {
    const boom = defineTool({
      name: "boom",
      description: "Always fails",
      inputSchema: z.object({}),
      execute: () => {
        throw new Error("disk on fire");
      },
    });
    const runtime = await scriptedRuntime({ script: async (turn) => void (await turn.callTool("boom", {})) });
    const session = await sessionOn(runtime, { tools: [boom] });
    await session.send("go").result;
    const call = runtime.calls[0]!;
    expect(call.result).toMatchObject({ isError: true });
    expect(call.result!.toolReturn).toContain("disk on fire");
    expect(call.response).toMatchObject({ result: { is_error: true } });
  });

  it("never runs the handler for wrong-typed input and names the failing path", async () => {
    const execute = vi.fn(() => "never");
    const strict = defineTool({ name: "strict", description: "Typed", inputSchema: z.object({ count: z.number().int() }), execute });
    const runtime = await scriptedRuntime({ script: async (turn) => void (await turn.callTool("strict", { count: "three" })) });
    const session = await sessionOn(runtime, { tools: [strict] });
    const outcomes: string[] = [];
    session.on("tool-call-end", (event) => outcomes.push(event.outcome));
    await session.send("go").result;
    expect(execute).not.toHaveBeenCalled();
    expect(outcomes).toEqual(["invalid-input"]);
    expect(runtime.calls[0]!.result!.isError).toBe(true);
    expect(runtime.calls[0]!.result!.toolReturn).toContain("count");
  });

  it("answers a call past the tool's timeout with the timeout text and aborts the handler's signal", async () => {
    let reason: unknown;
    const slow = defineTool({
      name: "slow_write",
      description: "Never finishes in time",
      inputSchema: z.object({}),
      timeoutMs: 200,
      execute: (_input, { signal }) =>
        new Promise((resolve) => {
          signal.addEventListener("abort", () => {
            reason = signal.reason;
            resolve("too late");
          });
        }),
    });
    const runtime = await scriptedRuntime({ script: async (turn) => void (await turn.callTool("slow_write", {})) });
    const session = await sessionOn(runtime, { tools: [slow] });
    const started = Date.now();
    await session.send("go").result;
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(reason).toMatchObject({ kind: "timeout" });
    const text = runtime.calls[0]!.result!.toolReturn;
    expect(text).toContain("timed out after 200 ms");
    expect(text).toContain("may have applied its effects");
  });

  it("does not run a tool twice when the same request is delivered again (same request_id)", async () => {
    let runs = 0;
    const counter = defineTool({ name: "count", description: "Counts", inputSchema: z.object({}), execute: () => `run ${++runs}` });
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        await turn.callTool("count", {}, { toolCallId: "call-fixed" });
        await turn.redeliverToolCall("call-fixed");
        await turn.say("done");
      },
    });
    const session = await sessionOn(runtime, { tools: [counter] });
    const duplicates: string[] = [];
    session.on("tool-call-duplicate", (event) => duplicates.push(event.disposition));
    await session.send("go").result;
    expect(runs).toBe(1);
    expect(runtime.calls).toHaveLength(1);
    const responses = runtime.frames.filter((record) => record.type === "external_tool_call_response");
    expect(responses).toHaveLength(1); // answered on this epoch already: nothing written again
    expect(duplicates).toEqual(["duplicate"]);
  });

  it("a model request that reuses an answered call's id and input (a provider's call_0) runs the tool again, and each gets its own answer", async () => {
    let runs = 0;
    const counter = defineTool({ name: "count", description: "Counts", inputSchema: z.object({}), execute: () => `run ${++runs}` });
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        const first = await turn.callTool("count", {}, { toolCallId: "call_0" });
        const second = await turn.callTool("count", {}, { toolCallId: "call_0" });
        await turn.say(`${first.toolReturn} / ${second.toolReturn}`);
      },
    });
    const session = await sessionOn(runtime, { tools: [counter] });
    const reused: string[] = [];
    session.on("tool-call-reused", (event) => reused.push(event.toolCallId));
    expect((await session.send("go").result).text).toBe("run 1 / run 2");
    expect((await session.send("again").result).text).toBe("run 3 / run 4");
    expect(runs).toBe(4);
    expect(reused).toEqual(["call_0", "call_0", "call_0"]);
  });

  it("the runtime asking again for a call while its answer is still owed joins it: one run", async () => {
    let runs = 0;
    const gate = deferred();
    const slow = defineTool({
      name: "slow",
      description: "Slow",
      inputSchema: z.object({}),
      execute: async () => {
        runs++;
        await gate.promise;
        return "slow done";
      },
    });
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        const [first, again] = await Promise.all([
          turn.callTool("slow", {}, { toolCallId: "call-9" }),
          (async () => {
            await until(() => runs === 1, "the first run", 2_000);
            return turn.resendToolCall("call-9");
          })(),
        ]);
        await turn.say(`${first.toolReturn} / ${again.toolReturn}`);
      },
    });
    const session = await sessionOn(runtime, { tools: [slow] });
    const duplicates: string[] = [];
    session.on("tool-call-duplicate", (event) => {
      duplicates.push(event.disposition);
      gate.resolve(); // the first run ends only once the second ask was taken
    });
    expect((await session.send("go").result).text).toBe("slow done / slow done");
    expect(runs).toBe(1);
    expect(duplicates).toEqual(["joined"]);
  });

  it("abort() during a running tool aborts its signal, answers the runtime at once, and the next turn starts", async () => {
    const { tool: hang, entered, reasons } = hangingTool();
    let turns = 0;
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        turns++;
        if (turns === 1) await turn.callTool("hang", {});
        else await turn.say("second turn");
      },
    });
    const session = await sessionOn(runtime, { tools: [hang] });
    const first = session.send("first");
    await entered;
    const abortStarted = Date.now();
    await first.abort();
    expect(Date.now() - abortStarted).toBeLessThan(2_500);
    expect(reasons).toEqual([expect.objectContaining({ kind: "cancelled" })]);
    expect(runtime.calls[0]!.response).toMatchObject({ error: expect.stringContaining("cancelled") });
    const firstResult = await first.result;
    expect(firstResult.stopReason).not.toBe("end_turn");
    const second = await session.send("second").result;
    expect(second.text).toBe("second turn");
  });

  it("abort() the runtime answers aborted: false: the call is still answered at once and the turn ends as the runtime ends it", async () => {
    const { tool: hang, entered } = hangingTool();
    // The real runtime answered the abort of a running turn aborted: false in 6 of 27 runs of
    // the sandbox suite; the turn went on with the cancelled answer to end_turn.
    const runtime = await scriptedRuntime({
      missedAborts: 1,
      script: async (turn) => {
        if (turn.userText === "again") return void (await turn.say("second turn"));
        const result = await turn.callTool("hang", {});
        await turn.say(result.isError ? "the tool was cancelled" : "the tool ran");
      },
    });
    const session = await sessionOn(runtime, { tools: [hang] });
    const turn = session.send("go");
    await entered;
    await turn.abort();
    const result = await turn.result;
    expect(result).toMatchObject({ stopReason: "end_turn", text: "the tool was cancelled" });
    const sent = runtime.frames
      .map((record) => record.type)
      .filter((type) => type === "abort_message" || type === "external_tool_call_response");
    expect(sent).toEqual(["abort_message", "external_tool_call_response"]);
    expect(runtime.calls[0]!.response).toMatchObject({ error: expect.stringContaining("cancelled") });
    expect(session.pendingToolCalls).toBe(0);
    expect(await session.send("again").result).toMatchObject({ stopReason: "end_turn", text: "second turn" });
  });

  it("close() answers running calls as cancelled at once and leaves no pending call", async () => {
    const { tool: hang, entered } = hangingTool();
    const runtime = await scriptedRuntime({ script: async (turn) => void (await turn.callTool("hang", {})) });
    const session = await sessionOn(runtime, { tools: [hang] });
    const turn = session.send("go");
    await entered;
    expect(session.pendingToolCalls).toBe(1);
    await session.close();
    expect(session.pendingToolCalls).toBe(0);
    await expect(turn.result).rejects.toMatchObject({ code: "ABORTED" });
    await until(() => runtime.calls[0]!.status !== "pending", "the call settled at the runtime");
    expect(runtime.calls[0]!.response).toMatchObject({ error: expect.stringContaining("cancelled") });
  });

  it("keeps two sessions with the same tool names in their own scopes", async () => {
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        const result = await turn.callTool("whoami", {});
        await turn.say(result.toolReturn);
      },
    });
    const make = (name: string) =>
      defineTool({ name: "whoami", description: "Names the session", inputSchema: z.object({}), execute: async () => name });
    const [a, b] = await Promise.all([sessionOn(runtime, { tools: [make("A")] }), sessionOn(runtime, { tools: [make("B")] })]);
    const [resultA, resultB] = await Promise.all([a.send("a").result, b.send("b").result]);
    expect(resultA.text).toBe("A");
    expect(resultB.text).toBe("B");
  });

  it("a throwing event listener is reported as LISTENER_FAILED and the call still settles", async () => {
    const runtime = await scriptedRuntime({ script: async (turn) => void (await turn.callTool("get_weather", { city: "Oslo" })) });
    const session = await sessionOn(runtime, { tools: [weather] });
    const codes: string[] = [];
    session.on("error", (error) => codes.push(error.code));
    session.on("tool-call-end", () => {
      throw new Error("listener bug");
    });
    const result = await session.send("go").result;
    expect(result.stopReason).toBe("end_turn");
    expect(runtime.calls[0]!.result!.toolReturn).toBe("sunny in Oslo");
    expect(codes).toEqual(["LISTENER_FAILED"]);
  });

  it("reassertToolsEachTurn re-registers the full tool set before each turn, after another controller wiped it", async () => {
    const runtime = await scriptedRuntime({ script: async (turn) => void (await turn.callTool("get_weather", { city: "Rome" })) });
    for (const reassert of [false, true]) {
      const link = new LocalLink({ url: runtime.url, pingIntervalMs: 0 });
      const session = await sessionOn(runtime, { backend: { kind: "link", link }, tools: [weather], reassertToolsEachTurn: reassert });
      // Another controller speaking through the same connection id (one cloud environment) replaces the set with nothing.
      link.send({
        type: "runtime_external_tools_update",
        request_id: `wipe-${reassert}`,
        updates: [{ runtimes: [{ agent_id: session.agentId, conversation_id: session.conversationId }], external_tools: [] }],
      });
      // The runtime answers once it has replaced the set.
      await until(
        () =>
          runtime.sentFrames.some(
            (record) =>
              record.type === "runtime_external_tools_update_response" &&
              (record.frame as { request_id: string }).request_id === `wipe-${reassert}`,
          ),
        "the wipe applied",
      );
      await session.send("go").result;
      const last = runtime.calls.at(-1);
      if (reassert) expect(last?.result?.toolReturn).toBe("sunny in Rome");
      else expect(last === undefined || last.result?.toolReturn !== "sunny in Rome").toBe(true);
      await session.close();
    }
  });

  it("send() while a turn runs throws TURN_IN_PROGRESS", async () => {
    const release = deferred();
    const runtime = await scriptedRuntime({ script: async () => release.promise });
    const session = await sessionOn(runtime);
    const turn = session.send("one");
    expect(() => session.send("two")).toThrow(expect.objectContaining({ code: "TURN_IN_PROGRESS" }));
    release.resolve();
    await turn.result;
  });
});
