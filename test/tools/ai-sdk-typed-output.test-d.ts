/**
 * fromAiSdkTools keeps each AI SDK tool's output type: the client tools are named by their keys
 * and typed by what their `execute` returns (a streaming execute: its items), so a session's
 * `tool-call-end` event and turn result carry the real value's type.
 */
import { tool } from "ai";
import { describe, expectTypeOf, test } from "vitest";
import { z } from "zod";
import { createSession, fromAiSdkTools, type ClientTool, type ToolInputSchema } from "../../packages/toolrelay/src/index.js";

const tools = fromAiSdkTools({
  get_weather: tool({
    description: "d",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, celsius: 21 }),
    toModelOutput: ({ output }) => ({ type: "text", value: `${output.celsius} °C` }),
  }),
  progress: tool({
    description: "d",
    inputSchema: z.object({}),
    async *execute() {
      yield { percent: 100 };
    },
  }),
});

describe("fromAiSdkTools output types", () => {
  test("each tool is typed by its key and its execute's output", () => {
    expectTypeOf(tools).toEqualTypeOf<
      Array<
        | ClientTool<ToolInputSchema, { city: string; celsius: number }, "get_weather">
        | ClientTool<ToolInputSchema, { percent: number }, "progress">
      >
    >();
  });

  test("the session's tool-call-end event and turn result carry them", async () => {
    const session = await createSession({ backend: { kind: "local", url: "ws://127.0.0.1:1" }, agent: { id: "a" }, tools });
    session.on("tool-call-end", (event) => {
      if (event.toolName === "get_weather") expectTypeOf(event.output).toEqualTypeOf<{ city: string; celsius: number } | undefined>();
      if (event.toolName === "progress") expectTypeOf(event.output).toEqualTypeOf<{ percent: number } | undefined>();
    });
    const result = await session.send("hi").result;
    for (const call of result.toolOutputs) {
      if (call.toolName === "get_weather") expectTypeOf(call.output).toEqualTypeOf<{ city: string; celsius: number } | undefined>();
    }
  });
});
