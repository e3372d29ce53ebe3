/**
 * The sidecar in this process (PassThrough streams) against the scripted
 * runtime: tool calls carried to the host with their input as sent, the
 * host's answer as what the model reads, and every way a turn ends as its
 * one named fault.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startScriptedRuntime, type ScriptedRuntime } from "../../packages/toolrelay/src/testing/index.js";
import type { Sidecar } from "../../packages/toolrelay/src/sidecar/index.js";
import { directiveScript, type ToolReturnRecord } from "../fixtures/sidecar/directive-script.js";
import { inProcessSidecar, type AnyFrame, type FrameHost } from "./support/frame-host.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const weather = {
  name: "get_weather",
  description: "Current weather for a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  annotations: { readOnlyHint: true },
};

async function setUp(): Promise<{ runtime: ScriptedRuntime; host: FrameHost; sidecar: Sidecar; returns: ToolReturnRecord[] }> {
  const returns: ToolReturnRecord[] = [];
  let runtime: ScriptedRuntime | undefined;
  runtime = await startScriptedRuntime({
    script: directiveScript(
      () => runtime,
      (record) => returns.push(record),
    ),
    heartbeatIntervalMs: 0,
  });
  const { sidecar, host } = inProcessSidecar();
  cleanups.push(() => runtime!.close());
  cleanups.push(() => sidecar.stop());
  await host.greet();
  return { runtime, host, sidecar, returns };
}

/** Send a turn and wait for its turn_end. */
async function turn(host: FrameHost, session: string, id: string, message: string): Promise<AnyFrame> {
  const from = host.frames.length;
  host.send({ type: "send", session, turn: id, message });
  return host.next({ type: "turn_end", session, turn: id }, { from });
}

describe("sidecar turns against the scripted runtime", () => {
  it("hands the host every input exactly as the runtime sent it (an extra key, a missing field) and the host's verdict reaches the model", async () => {
    const { runtime, host, returns } = await setUp();
    await host.open("s1", runtime.url, [weather]);
    const inputs: unknown[] = [];
    host.answerCalls((call) => {
      inputs.push(call.input);
      const input = call.input as Record<string, unknown>;
      if (typeof input.city !== "string")
        return { type: "tool_result", content: [{ type: "text", text: "refused: city is missing" }], isError: true };
      const extra = Object.keys(input).filter((key) => key !== "city");
      return {
        type: "tool_result",
        content: [
          { type: "text", text: `sunny in ${input.city}` },
          { type: "text", text: `ignored: ${extra.join(",")}` },
        ],
      };
    });
    const end = await turn(host, "s1", "t1", 'CALL get_weather {"city":"Paris","units":"kelvin"}\nCALL get_weather {"town":"Oslo"}');
    expect(inputs).toEqual([{ city: "Paris", units: "kelvin" }, { town: "Oslo" }]);
    expect(returns[0]).toMatchObject({ isError: false, toolReturn: "sunny in Paris\nignored: units" });
    expect(returns[1]).toMatchObject({ isError: true });
    expect(returns[1]!.toolReturn).toContain("refused: city is missing");
    expect(end).toMatchObject({ fault: "tool_error", stop: "end_turn", text: expect.stringContaining("done: sunny in Paris") });
    expect(end.tool_calls).toEqual([
      { call: expect.any(String), tool_call_id: expect.any(String), tool: "get_weather", outcome: "ok" },
      { call: expect.any(String), tool_call_id: expect.any(String), tool: "get_weather", outcome: "tool_error" },
    ]);
    const events = host.frames
      .filter((frame) => frame.type === "turn_event" && frame.turn === "t1")
      .map((frame) => (frame.event as { kind: string }).kind);
    expect(events).toEqual(expect.arrayContaining(["tool_call", "tool_result", "assistant"]));
  });

  it("ends a plain turn ok, with its text and events", async () => {
    const { runtime, host } = await setUp();
    await host.open("s1", runtime.url, [weather]);
    host.answerCalls(() => ({ type: "tool_result", content: [{ type: "text", text: "sunny" }] }));
    const end = await turn(host, "s1", "t1", 'SAY Looking.\nCALL get_weather {"city":"Paris"}');
    expect(end).toMatchObject({ fault: "ok", stop: "end_turn", message: null, text: "Looking.done: sunny" });
    const call = host.frames.find((frame) => frame.type === "tool_call")!;
    expect(call).toMatchObject({
      session: "s1",
      turn: "t1",
      tool: "get_weather",
      input: { city: "Paris" },
      timeout_ms: 60_000,
      agent_id: expect.any(String),
    });
  });

  it("a tool_error reaches the model as a tool error and the turn ends tool_error", async () => {
    const { runtime, host, returns } = await setUp();
    await host.open("s1", runtime.url, [weather]);
    host.answerCalls(() => ({ type: "tool_error", message: "the weather service is down" }));
    const end = await turn(host, "s1", "t1", 'CALL get_weather {"city":"Paris"}');
    expect(returns[0]).toMatchObject({ isError: true, toolReturn: expect.stringContaining("the weather service is down") });
    expect(end).toMatchObject({ fault: "tool_error", stop: "end_turn" });
  });

  it("a host that does not answer in time gets cancel (timeout) and the turn ends tool_timeout", async () => {
    const { runtime, host, returns } = await setUp();
    await host.open("s1", runtime.url, [{ ...weather, timeout_ms: 150 }]);
    const end = await turn(host, "s1", "t1", 'CALL get_weather {"city":"Paris"}');
    const call = host.frames.find((frame) => frame.type === "tool_call")!;
    expect(host.frames).toContainEqual({
      type: "cancel",
      session: "s1",
      call: call.call,
      reason: "timeout",
      message: expect.stringContaining("150 ms"),
    });
    expect(returns[0]!.toolReturn).toContain("timed out after 150 ms");
    expect(end).toMatchObject({ fault: "tool_timeout", tool_calls: [expect.objectContaining({ outcome: "timeout", call: call.call })] });
    // A late answer is ignored: no error frame, nothing sent to the runtime again.
    const from = host.frames.length;
    host.send({ type: "tool_result", session: "s1", call: call.call, content: [{ type: "text", text: "late" }] });
    await turn(host, "s1", "t2", "SAY still here");
    expect(host.frames.slice(from).filter((frame) => frame.type === "error")).toEqual([]);
    expect(runtime.calls).toHaveLength(1);
  });

  it("abort cancels the pending call (cancel, reason cancelled) and the turn ends cancelled", async () => {
    const { runtime, host } = await setUp();
    await host.open("s1", runtime.url, [weather]);
    host.send({ type: "send", session: "s1", turn: "t1", message: 'CALL get_weather {"city":"Paris"}' });
    const call = await host.next({ type: "tool_call" });
    host.send({ type: "abort", session: "s1", turn: "t1" });
    const cancel = await host.next({ type: "cancel", call: call.call });
    expect(cancel).toMatchObject({ reason: "cancelled", session: "s1" });
    const end = await host.next({ type: "turn_end", turn: "t1" });
    expect(end).toMatchObject({ fault: "cancelled", stop: "cancelled" });
  });

  it("a model that fails ends runtime_error with the runtime's message", async () => {
    const { runtime, host } = await setUp();
    await host.open("s1", runtime.url, []);
    const end = await turn(host, "s1", "t1", "FAIL the model exploded");
    expect(end).toMatchObject({ fault: "runtime_error", stop: "error", message: expect.stringContaining("the model exploded") });
  });

  it("a lost link ends link_lost, and the session works again after it reconnects", async () => {
    const { runtime, host } = await setUp();
    await host.open("s1", runtime.url, []);
    const end = await turn(host, "s1", "t1", "DROP");
    expect(end).toMatchObject({ fault: "link_lost", stop: null });
    // Sent while the link may still be reconnecting: the SDK writes it once the link is back.
    const again = await turn(host, "s1", "t2", "SAY back");
    expect(again).toMatchObject({ fault: "ok", text: "back" });
  });

  it("a second send while a turn runs ends turn_in_progress at once; the same turn id is refused as turn_exists", async () => {
    const { runtime, host } = await setUp();
    await host.open("s1", runtime.url, []);
    host.send({ type: "send", session: "s1", turn: "t1", message: "HOLD" });
    const refused = await turn(host, "s1", "t2", "SAY hi");
    expect(refused).toMatchObject({ fault: "turn_in_progress", stop: null, text: "" });
    host.send({ type: "send", session: "s1", turn: "t1", message: "SAY again" });
    expect(await host.next({ type: "error", code: "turn_exists" })).toMatchObject({ session: "s1", turn: "t1", frame_type: "send" });
    host.send({ type: "abort", session: "s1" });
    expect(await host.next({ type: "turn_end", turn: "t1" })).toMatchObject({ fault: "cancelled" });
  });

  it("close_session during a turn ends it session_closed, cancels its call, then answers session_closed", async () => {
    const { runtime, host } = await setUp();
    await host.open("s1", runtime.url, [weather]);
    host.send({ type: "send", session: "s1", turn: "t1", message: 'CALL get_weather {"city":"Paris"}' });
    const call = await host.next({ type: "tool_call" });
    host.send({ type: "close_session", session: "s1" });
    const closed = await host.next({ type: "session_closed", session: "s1" });
    expect(closed.reason).toBe("closed");
    const order = host.frames.map((frame) => frame.type);
    expect(order.indexOf("cancel")).toBeLessThan(order.indexOf("turn_end"));
    expect(order.indexOf("turn_end")).toBeLessThan(order.indexOf("session_closed"));
    expect(host.frames.find((frame) => frame.type === "turn_end")).toMatchObject({ fault: "session_closed" });
    expect(host.frames.find((frame) => frame.type === "cancel")).toMatchObject({ call: call.call, reason: "cancelled" });
    await expect.poll(() => runtime.calls[0]?.status).toBe("answered");
    host.send({ type: "send", session: "s1", turn: "t2", message: "SAY hi" });
    expect(await host.next({ type: "error", code: "unknown_session" })).toMatchObject({ session: "s1", turn: "t2" });
  });

  it("runs several sessions side by side, each call answered in its own session", async () => {
    const { runtime, host } = await setUp();
    await host.open("a", runtime.url, [weather]);
    await host.open("b", runtime.url, [weather]);
    host.answerCalls((call) => ({ type: "tool_result", content: [{ type: "text", text: `from ${String(call.session)}` }] }));
    const [endA, endB] = await Promise.all([
      turn(host, "a", "t", 'CALL get_weather {"city":"A"}'),
      turn(host, "b", "t", 'CALL get_weather {"city":"B"}'),
    ]);
    expect(endA).toMatchObject({ fault: "ok", text: "done: from a" });
    expect(endB).toMatchObject({ fault: "ok", text: "done: from b" });
    // An answer for another session's call is refused and changes nothing.
    host.send({ type: "send", session: "a", turn: "t2", message: 'CALL get_weather {"city":"A"}' });
    const call = await host.next({ type: "tool_call", turn: "t2" });
    expect(call.session).toBe("a");
  });
});
