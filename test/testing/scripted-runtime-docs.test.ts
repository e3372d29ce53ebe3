/**
 * The examples of docs/testing.md, run against the SDK's own session: if the
 * docs drift from what the scripted runtime and the session do, this fails.
 */
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { createSession, defineTool } from "../../packages/toolrelay/src/index.js";
import { startScriptedRuntime, type ScriptedRuntime, type ScriptedToolResult } from "../../packages/toolrelay/src/testing/index.js";

const getWeather = defineTool({
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: z.object({ city: z.string() }),
  async execute({ city }) {
    return `sunny in ${city}`;
  },
});

let runtime: ScriptedRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

it("docs/testing.md: a first test", async () => {
  runtime = await startScriptedRuntime({
    script: async (turn) => {
      await turn.say("Let me check. ");
      const result = await turn.callTool("get_weather", { city: "Paris" });
      await turn.say(`It is ${result.toolReturn}.`);
    },
  });
  await using session = await createSession({
    backend: { kind: "local", url: runtime.url },
    agent: { create: { model: "scripted/test" } },
    tools: [getWeather],
  });
  const result = await session.send("Weather in Paris?").result;
  expect(result.text).toBe("Let me check. It is sunny in Paris.");
  expect(runtime.calls).toMatchObject([
    { toolName: "get_weather", input: { city: "Paris" }, status: "answered", result: { isError: false, toolReturn: "sunny in Paris" } },
  ]);
});

it("docs/testing.md: bad input comes back as an error result naming the field", async () => {
  let seen: ScriptedToolResult | undefined;
  runtime = await startScriptedRuntime({
    script: async (turn) => {
      seen = await turn.callTool("get_weather", { city: 42 });
    },
  });
  await using session = await createSession({
    backend: { kind: "local", url: runtime.url },
    agent: { create: { model: "scripted/test" } },
    tools: [getWeather],
  });
  await session.send("Weather?").result;
  expect(seen?.isError).toBe(true);
  expect(seen?.toolReturn).toContain("city");
});

it("docs/testing.md: an abort ends the turn as cancelled", async () => {
  let aborted: boolean | undefined;
  const slow = defineTool({
    name: "long_job",
    description: "Takes a while",
    inputSchema: z.object({}),
    async execute(_input, { signal }) {
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      return "stopped";
    },
  });
  runtime = await startScriptedRuntime({
    script: async (turn) => {
      await turn.callTool("long_job", {});
      aborted = turn.signal.aborted;
      if (turn.signal.aborted) return;
      await turn.say("finished");
    },
  });
  await using session = await createSession({
    backend: { kind: "local", url: runtime.url },
    agent: { create: { model: "scripted/test" } },
    tools: [slow],
  });
  const turn = session.send("go");
  await expect.poll(() => runtime!.calls.length, { timeout: 2000 }).toBe(1);
  await turn.abort();
  const result = await turn.result;
  expect(result.stopReason).toBe("cancelled");
  expect(aborted).toBe(true);
  expect(result.text).toBe("");
});

it("docs/testing.md: an expect() that fails inside a script ends the turn as an error and makes close() reject with it", async () => {
  const local = await startScriptedRuntime({
    script: async (turn) => {
      const result = await turn.callTool("get_weather", { city: "Paris" });
      expect(result.toolReturn).toBe("raining in Paris"); // wrong on purpose
    },
  });
  await using session = await createSession({
    backend: { kind: "local", url: local.url },
    agent: { create: { model: "scripted/test" } },
    tools: [getWeather],
  });
  const result = await session.send("Weather in Paris?").result;
  expect(result.stopReason).toBe("error");
  expect(local.scriptErrors).toHaveLength(1);
  await expect(local.close()).rejects.toThrow(/raining in Paris/);
});

it("docs/testing.md: turn.fail() is an error turn, not a script error", async () => {
  runtime = await startScriptedRuntime({ script: (turn) => turn.fail("model exploded") });
  await using session = await createSession({
    backend: { kind: "local", url: runtime.url },
    agent: { create: { model: "scripted/test" } },
  });
  const result = await session.send("go").result;
  expect(result).toMatchObject({ stopReason: "error", error: "model exploded" });
  expect(runtime.scriptErrors).toEqual([]);
});
