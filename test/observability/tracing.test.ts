/**
 * OpenTelemetry spans of a session, into the SDK's in-memory exporter: one per turn and one per
 * client tool call (a child of its turn's), with ids, tool name, outcome and duration and no
 * payload; the global tracer of @opentelemetry/api by default, `false` for none.
 */
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../packages/toolrelay/src/index.js";
import { scriptedRuntime, sessionOn } from "../session/session-support.js";

const CANARY = "canary-7f3a-payload";

const weather = defineTool({
  name: "get_weather",
  description: "Weather for a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});
const broken = defineTool({
  name: "broken",
  description: "Always fails",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    throw new Error(`no weather for ${city}`);
  },
});

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider, tracer: provider.getTracer("toolrelay-test") };
}

/** A turn that calls both tools with the canary in the arguments, and says the canary. */
async function runtimeCallingBoth() {
  return scriptedRuntime({
    script: async (turn) => {
      await turn.callTools([
        { name: "get_weather", input: { city: CANARY } },
        { name: "broken", input: { city: CANARY } },
      ]);
      await turn.say(`done ${CANARY}`);
    },
  });
}

function epochMs([seconds, nanoseconds]: readonly [number, number]): number {
  return seconds * 1000 + nanoseconds / 1e6;
}

function allAttributeText(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(spans.map((span) => [span.name, span.attributes, span.status, span.events]));
}

afterEach(() => {
  trace.disable();
});

describe("tracing", () => {
  it("a span per tool call reaches the exporter, each a child of its turn's span, with no payload", async () => {
    const { exporter, tracer } = tracing();
    const runtime = await runtimeCallingBoth();
    const session = await sessionOn(runtime, { tools: [weather, broken], tracer });
    const result = await session.send(`weather in ${CANARY}?`).result;
    expect(result.stopReason).toBe("end_turn");

    const spans = exporter.getFinishedSpans();
    const turn = spans.find((span) => span.name === "toolrelay.turn");
    const calls = spans.filter((span) => span.name.startsWith("execute_tool "));
    expect(turn, "the turn's span").toBeDefined();
    expect(calls.map((span) => span.name).sort()).toEqual(["execute_tool broken", "execute_tool get_weather"]);
    for (const call of calls) {
      expect(call.parentSpanContext?.spanId).toBe(turn!.spanContext().spanId);
      expect(call.spanContext().traceId).toBe(turn!.spanContext().traceId);
      expect(call.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "toolrelay.agent.id": session.agentId,
        "toolrelay.conversation.id": session.conversationId,
        "toolrelay.connection.id": session.connectionId,
      });
      expect(call.attributes["gen_ai.tool.call.id"]).toEqual(expect.any(String));
      expect(call.attributes["toolrelay.duration_ms"]).toEqual(expect.any(Number));
      expect(call.attributes["toolrelay.request.ids"]).toHaveLength(1);
      // A call runs inside its turn: its span too (times are wall-clock ms, to a millisecond).
      expect(epochMs(call.startTime)).toBeGreaterThanOrEqual(epochMs(turn!.startTime) - 1);
      expect(epochMs(call.endTime)).toBeLessThanOrEqual(epochMs(turn!.endTime) + 1);
      expect(epochMs(call.endTime)).toBeGreaterThanOrEqual(epochMs(call.startTime));
    }
    const ok = calls.find((span) => span.name === "execute_tool get_weather")!;
    const failed = calls.find((span) => span.name === "execute_tool broken")!;
    expect(ok.attributes).toMatchObject({ "gen_ai.tool.name": "get_weather", "toolrelay.tool_call.outcome": "ok" });
    expect(ok.status.code).toBe(1);
    expect(failed.attributes).toMatchObject({ "gen_ai.tool.name": "broken", "toolrelay.tool_call.outcome": "tool-error" });
    expect(failed.status).toMatchObject({ code: 2, message: "tool-error" });
    expect(turn!.attributes).toMatchObject({
      "toolrelay.agent.id": session.agentId,
      "toolrelay.turn.stop_reason": "end_turn",
      "toolrelay.turn.tool_calls": 2,
    });
    // The prompt, the arguments, the results and the error text: none of them in any span.
    expect(allAttributeText(spans)).not.toContain(CANARY);
  });

  it("uses the global tracer of @opentelemetry/api by default, and none with tracer: false", async () => {
    const { exporter, provider } = tracing();
    trace.setGlobalTracerProvider(provider);
    const runtime = await runtimeCallingBoth();
    const traced = await sessionOn(runtime, { tools: [weather, broken] });
    await traced.send("go").result;
    expect(exporter.getFinishedSpans().filter((span) => span.name.startsWith("execute_tool "))).toHaveLength(2);
    await traced.close();
    exporter.reset();
    const untraced = await sessionOn(runtime, { tools: [weather, broken], tracer: false });
    await untraced.send("go").result;
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it("a turn the SDK could not finish ends its span with an error status", async () => {
    const { exporter, tracer } = tracing();
    const runtime = await scriptedRuntime({ script: () => new Promise<void>(() => undefined) });
    const session = await sessionOn(runtime, { tracer });
    const turn = session.send("hangs");
    await session.close();
    await expect(turn.result).rejects.toMatchObject({ code: "ABORTED" });
    const span = exporter.getFinishedSpans().find((candidate) => candidate.name === "toolrelay.turn");
    expect(span?.status).toMatchObject({ code: 2, message: "ABORTED" });
    expect(span?.attributes["toolrelay.turn.stop_reason"]).toBe("failed");
  });

  it("a tracer that throws never breaks the session", async () => {
    const runtime = await runtimeCallingBoth();
    const tracer = {
      startSpan(): never {
        throw new Error("tracer bug");
      },
    };
    const session = await sessionOn(runtime, { tools: [weather, broken], tracer });
    await expect(session.send("go").result).resolves.toMatchObject({ stopReason: "end_turn" });
  });
});
