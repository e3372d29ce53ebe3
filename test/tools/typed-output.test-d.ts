/**
 * Typed results: a tool's `outputSchema` types what `execute` returns, and the session's
 * `tool-call-end` event and turn result carry each tool's output type, told apart by `toolName`.
 */
import { describe, expectTypeOf, test } from "vitest";
import { z } from "zod";
import { createSession, defineTool, type ClientTool, type Session, type TurnResult } from "../../packages/toolrelay/src/index.js";

const weather = defineTool({
  name: "get_weather",
  description: "d",
  inputSchema: z.object({ city: z.string() }),
  outputSchema: z.object({ city: z.string(), celsius: z.number() }),
  execute: ({ city }) => ({ city, celsius: 21 }),
  toModelOutput: ({ city, celsius }) => `${celsius} °C in ${city}`,
});
const pay = defineTool({
  name: "pay",
  description: "d",
  inputSchema: z.object({ cents: z.number() }),
  outputSchema: z.object({ receipt: z.string() }),
  needsApproval: ({ cents }) => cents > 1_000,
  execute: async () => ({ receipt: "r-1" }),
});
const untyped = defineTool({ name: "note", description: "d", inputSchema: z.object({}), execute: () => "ok" });

describe("typed tool outputs", () => {
  test("outputSchema types execute's return value and the tool", () => {
    expectTypeOf(weather).toEqualTypeOf<ClientTool<z.ZodObject<{ city: z.ZodString }>, { city: string; celsius: number }, "get_weather">>();
    expectTypeOf(weather).toExtend<ClientTool>();
    // @ts-expect-error execute must return the output schema's type
    defineTool({
      name: "bad",
      description: "d",
      inputSchema: z.object({}),
      outputSchema: z.object({ n: z.number() }),
      execute: () => ({ n: "not a number" }),
    });
    defineTool({
      name: "bad_needs_approval",
      description: "d",
      inputSchema: z.object({ cents: z.number() }),
      // @ts-expect-error needsApproval gets the typed input
      needsApproval: ({ dollars }: { dollars: string }) => dollars === "1",
      execute: () => "x",
    });
  });

  test("the session's tool-call-end event and turn result are typed per tool", async () => {
    const session = await createSession({
      backend: { kind: "local", url: "ws://127.0.0.1:1" },
      agent: { id: "a" },
      tools: [weather, pay, untyped],
    });
    expectTypeOf(session).toEqualTypeOf<Session<(typeof weather | typeof pay | typeof untyped)[]>>();
    session.on("tool-call-end", (event) => {
      if (event.toolName === "get_weather") expectTypeOf(event.output).toEqualTypeOf<{ city: string; celsius: number } | undefined>();
      if (event.toolName === "pay") expectTypeOf(event.output).toEqualTypeOf<{ receipt: string } | undefined>();
      if (event.toolName === "note") expectTypeOf(event.output).toEqualTypeOf<unknown>();
    });
    const result = await session.send("hi").result;
    expectTypeOf(result).toExtend<TurnResult>();
    for (const call of result.toolOutputs) {
      if (call.toolName === "pay") expectTypeOf(call.output).toEqualTypeOf<{ receipt: string } | undefined>();
    }
  });

  test("listeners given as createSession({ on }) are typed per tool too, and the session's type is the same", async () => {
    const session = await createSession({
      backend: { kind: "local", url: "ws://127.0.0.1:1" },
      agent: { id: "a" },
      tools: [weather, pay],
      on: {
        "tool-call-end": (event) => {
          if (event.toolName === "pay") expectTypeOf(event.output).toEqualTypeOf<{ receipt: string } | undefined>();
          // @ts-expect-error not a tool of this session
          if (event.toolName === "note") return;
        },
        error: (error) => expectTypeOf(error.code).toBeString(),
      },
    });
    expectTypeOf(session).toEqualTypeOf<Session<(typeof weather | typeof pay)[]>>();
    await createSession({
      backend: { kind: "local", url: "ws://127.0.0.1:1" },
      agent: { id: "a" },
      // @ts-expect-error not a session event
      on: { "tool-call-ended": () => {} },
    });
  });

  test("a session without tools still types its events", async () => {
    const session = await createSession({ backend: { kind: "local", url: "ws://127.0.0.1:1" }, agent: { id: "a" } });
    session.on("tool-call-end", (event) => {
      expectTypeOf(event.toolName).toEqualTypeOf<string>();
      expectTypeOf(event.output).toEqualTypeOf<unknown>();
    });
  });
});
