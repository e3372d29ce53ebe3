/**
 * No answer is stranded by a lost write. SDK (cloud backend) ⇄ fault proxy (150 ms latency each
 * way) ⇄ reference relay ⇄ a listener made of raw sockets. The listener sends 100 tool call requests
 * at once; while their answers are in flight the proxy resets the SDK's connection once. Answers
 * written into the dying socket never arrive; after the reconnect the relay re-offers every request
 * it has no answer for, and the SDK answers each again from its cache (a newer epoch) — never
 * running a tool twice. Before the call table knew epochs, it called those re-offers duplicates and
 * stayed silent: the runtime waited out its 300 s (44 of 100 stranded at 150 ms).
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSession, defineTool, type Session } from "../../packages/toolrelay/src/index.js";
import { startRelay, type Relay } from "../../packages/relay/src/index.js";
import { startFaultProxy, type FaultProxy } from "../../packages/toolrelay/src/testing/index.js";
import { FakeListener } from "../relay/support/fake-listener.js";
import { letTimePass } from "./support/wait.js";

const KEY = "stranded-answers-key-0123456789";
const CALLS = 100;
const RUNTIME = { agent_id: "agent-stranded", conversation_id: "conv-stranded" };

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("a reset while 100 answers are in flight (150 ms latency each way)", () => {
  it("strands none of them and runs none twice", async () => {
    const relay: Relay = await startRelay({ apiKeys: [KEY], heartbeatIntervalMs: 0 });
    cleanups.push(() => relay.close());
    const listener = await FakeListener.start(relay.httpUrl, KEY, { mode: "split" });
    cleanups.push(async () => {
      listener.terminate();
    });
    // The listener answers the session's runtime_start (and every re-registration) for its runtime.
    const answered = new Map<string, number>();
    listener.control!.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as { type?: string; request_id?: string };
      if (frame.type === "runtime_start")
        listener.sendControl({ type: "runtime_start_response", request_id: frame.request_id, success: true, runtime: RUNTIME });
      if (frame.type === "external_tool_call_response")
        answered.set(String(frame.request_id), (answered.get(String(frame.request_id)) ?? 0) + 1);
    });
    const proxy: FaultProxy = await startFaultProxy({ target: { host: "127.0.0.1", port: Number(new URL(relay.httpUrl).port) } });
    cleanups.push(() => proxy.close());

    const executions = new Map<string, number>();
    const work = defineTool({
      name: "work",
      description: "Works for 100–280 ms",
      inputSchema: z.object({ n: z.number() }),
      execute: async ({ n }, { toolCallId }) => {
        executions.set(toolCallId, (executions.get(toolCallId) ?? 0) + 1);
        await letTimePass(100 + (n % 10) * 20); // the tool's work takes time, on purpose
        return `done ${n}`;
      },
    });
    const session: Session = await createSession({
      backend: {
        kind: "cloud",
        apiKey: KEY,
        baseUrl: `http://127.0.0.1:${proxy.port}`,
        environment: { connectionId: listener.answer.connectionId },
        pingIntervalMs: 0,
        backoff: { initialDelayMs: 20, maxDelayMs: 200 },
      },
      agent: { id: RUNTIME.agent_id },
      conversation: RUNTIME.conversation_id,
      tools: [work],
      turnStallProbeMs: 0,
    });
    cleanups.push(() => session.close());
    session.on("error", () => undefined);
    proxy.latency(150);

    for (let index = 0; index < CALLS; index++) {
      listener.sendControl({
        type: "external_tool_call_request",
        request_id: `external-tool-${index}`,
        runtime: RUNTIME,
        tool_call_id: `call-${index}`,
        tool_name: "work",
        input: { n: index },
      });
    }
    // Reset while answers are on their way: half of them written (and held 150 ms in the proxy), half still running.
    let ended = 0;
    session.on("tool-call-end", () => void ended++);
    await expect.poll(() => ended, { timeout: 10_000, interval: 5 }).toBeGreaterThanOrEqual(CALLS / 2);
    const inFlight = ended - answered.size;
    proxy.reset();

    await expect.poll(() => answered.size, { timeout: 20_000, interval: 100 }).toBe(CALLS);
    const stranded = Array.from({ length: CALLS }, (_, index) => `external-tool-${index}`).filter((id) => !answered.has(id));
    const doubleRuns = [...executions.entries()].filter(([, runs]) => runs > 1);
    console.info(
      `reset with ${inFlight} answers written but not yet delivered; stranded: ${stranded.length} of ${CALLS}; double executions: ${doubleRuns.length}; ` +
        `frames that reached the listener: ${[...answered.values()].reduce((a, b) => a + b, 0)}`,
    );
    expect(inFlight).toBeGreaterThan(0);
    expect(stranded).toEqual([]);
    expect(doubleRuns).toEqual([]);
    expect(executions.size).toBe(CALLS);
  }, 60_000);
});
