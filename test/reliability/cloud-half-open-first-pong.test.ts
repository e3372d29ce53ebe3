/**
 * Issue 23, finding 4, end to end on real loopback sockets and real timers: SDK session (cloud
 * backend, ping every 1 s, pong deadline 2 s) ⇄ a proxy that can kill one direction ⇄ the
 * reference relay (its own heartbeat off, so the SDK must find the dead path itself) ⇄ a listener
 * made of raw sockets. A tool call arrives right after the session opened; the tool kills the path
 * as it starts — before the link's first ping, so before any pong — and its answer is written
 * into the dead socket. The link must call the path dead within pingIntervalMs + pongTimeoutMs
 * of opening, reconnect, and the listener must get that answer exactly once, the tool having run
 * once. The exact bound (to the millisecond) is held by test/transport/cloud-link-half-open-start.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSession, defineTool, type ToolCallEndEvent } from "../../packages/toolrelay/src/index.js";
import { startRelay } from "../../packages/relay/src/index.js";
import { FakeListener } from "../relay/support/fake-listener.js";
import { startHalfOpenProxy, type ProxyDirection } from "../transport/half-open-proxy.js";
import { letTimePass, until } from "./support/wait.js";

const KEY = "half-open-first-pong-key";
const RUNTIME = { agent_id: "agent-half-open", conversation_id: "conv-half-open" };
const PING_INTERVAL_MS = 1_000;
const PONG_TIMEOUT_MS = 2_000;
const BOUND_MS = PING_INTERVAL_MS + PONG_TIMEOUT_MS;

const cleanups: Array<() => Promise<unknown> | undefined> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const cases: Array<{ name: string; dead: ProxyDirection[]; relayKeepsSending: boolean }> = [
  { name: "both directions", dead: ["to-target", "to-client"], relayKeepsSending: false },
  { name: "relay → SDK only", dead: ["to-client"], relayKeepsSending: false },
  { name: "SDK → relay only, while the relay keeps sending frames", dead: ["to-target"], relayKeepsSending: true },
];

describe("a cloud session whose path dies before the first pong (real loopback, real timers)", () => {
  for (const { name, dead, relayKeepsSending } of cases) {
    it(`dead ${name}: found within pingInterval + pongTimeout of opening; the answer written into it reaches the listener once`, async () => {
      const relay = await startRelay({ apiKeys: [KEY], heartbeatIntervalMs: 0 });
      cleanups.push(() => relay.close());
      const listener = await FakeListener.start(relay.httpUrl, KEY, { mode: "split" });
      cleanups.push(async () => listener.terminate());
      const answers = new Map<string, string[]>();
      listener.control!.on("message", (data) => {
        const frame = JSON.parse(data.toString()) as { type?: string; request_id?: string; result?: unknown; error?: unknown };
        if (frame.type === "runtime_start")
          listener.sendControl({ type: "runtime_start_response", request_id: frame.request_id, success: true, runtime: RUNTIME });
        if (frame.type === "external_tool_call_response") {
          const id = String(frame.request_id);
          answers.set(id, [...(answers.get(id) ?? []), JSON.stringify(frame.result ?? frame.error)]);
        }
      });
      const proxy = await startHalfOpenProxy({ host: "127.0.0.1", port: Number(new URL(relay.httpUrl).port) });
      cleanups.push(() => proxy.close());

      let executions = 0;
      let killedAt = 0;
      let killedConnections = 0;
      const work = defineTool({
        name: "work",
        description: "Kills the path as it starts, then answers",
        inputSchema: z.object({ n: z.number() }),
        execute: async ({ n }) => {
          executions++;
          if (killedAt === 0) {
            killedAt = Date.now();
            killedConnections = proxy.kill(dead);
          }
          await letTimePass(50); // on purpose: the answer is written after the path died
          return `done ${n}`;
        },
      });
      const openedNoEarlierThan = Date.now();
      const session = await createSession({
        backend: {
          kind: "cloud",
          apiKey: KEY,
          baseUrl: `http://127.0.0.1:${proxy.port}`,
          environment: { connectionId: listener.answer.connectionId },
          pingIntervalMs: PING_INTERVAL_MS,
          pongTimeoutMs: PONG_TIMEOUT_MS,
          backoff: { initialDelayMs: 20, maxDelayMs: 200 },
        },
        agent: { id: RUNTIME.agent_id },
        conversation: RUNTIME.conversation_id,
        tools: [work],
        turnStallProbeMs: 0,
      });
      const openedNoLaterThan = Date.now();
      cleanups.push(() => session.close());
      const errors: string[] = [];
      const ends: ToolCallEndEvent[] = [];
      let detectedAt = 0;
      session.on("error", (error) => errors.push(`${error.code}: ${error.message}`));
      session.on("tool-call-end", (event) => ends.push(event));
      session.on("connection-state-change", ({ state }) => {
        if (state === "reconnecting" && detectedAt === 0) detectedAt = Date.now();
      });

      let traffic: NodeJS.Timeout | undefined;
      if (relayKeepsSending) {
        // Frames for the session's runtime on both listener sockets, all the time: they reach the SDK, which proves nothing.
        traffic = setInterval(() => {
          const frame = { type: "update_queue", runtime: RUNTIME, queue: [] };
          listener.sendControl(frame);
          listener.sendStream(frame);
        }, 100);
        cleanups.push(async () => clearInterval(traffic));
      }
      listener.sendControl({
        type: "external_tool_call_request",
        request_id: "external-tool-1",
        runtime: RUNTIME,
        tool_call_id: "call-1",
        tool_name: "work",
        input: { n: 1 },
      });

      await until(() => killedAt !== 0, "the tool started and killed the path", 2_000);
      expect(killedConnections).toBe(2); // both status sockets
      expect(killedAt - openedNoEarlierThan).toBeLessThan(PING_INTERVAL_MS); // before the first ping, so before any pong
      await until(
        () => detectedAt !== 0,
        () => `the link found the dead path (errors: ${errors.join(" | ")})`,
        BOUND_MS + 2_000,
      );
      clearInterval(traffic);
      const detectedAfterOpenMs = detectedAt - openedNoLaterThan;
      console.info(
        `[half-open before the first pong, dead ${name}] detected ${detectedAt - killedAt} ms after the path died, ` +
          `${detectedAfterOpenMs}–${detectedAt - openedNoEarlierThan} ms after the sockets opened (bound ${BOUND_MS} ms)`,
      );
      expect(detectedAt - openedNoEarlierThan).toBeGreaterThanOrEqual(BOUND_MS - 5); // not before the deadline
      // Within the bound; the margin is for a loaded machine (the manual-clock test holds it to the millisecond).
      expect(detectedAfterOpenMs).toBeLessThan(BOUND_MS + 1_000);
      expect(errors.some((line) => /CONNECTION_CLOSED: cloud link dropped: no answer to a ping .*half-open/.test(line))).toBe(true);

      await until(() => session.state === "open", "reconnected", 5_000);
      await until(() => answers.get("external-tool-1")?.length, "the answer reached the listener", 5_000);
      await letTimePass(300); // on purpose: no second copy of the answer follows
      expect(answers.get("external-tool-1")).toHaveLength(1);
      expect(answers.get("external-tool-1")?.[0]).toContain('"text":"done 1"');
      expect(executions).toBe(1);
      expect(ends.map((event) => event.outcome)).toEqual(["ok"]);
    });
  }
});
