/**
 * Targeted transport faults over real loopback:
 * - a half-open link (fault-proxy blackhole) is detected within pingIntervalMs + one interval;
 * - an oversize frame closes only its own socket (1009), the calls on it settle within 100 ms,
 *   other sessions carry on, and the link reconnects and re-registers;
 * - a runtime killed and restarted on the same port mid-call is reconnected to (first retry
 *   ≤ 100 ms, jittered exponential backoff capped at 5 s) and the tools are registered again.
 */
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { z } from "zod";
import { createSession, defineTool, type Session, type SessionOptions } from "../../packages/toolrelay/src/index.js";
import {
  startFaultProxy,
  startScriptedRuntime,
  type ScriptedRuntime,
  type ScriptedTurn,
} from "../../packages/toolrelay/src/testing/index.js";
import { exponentialBackoff } from "../../packages/toolrelay/src/transport/backoff.js";
import { LocalLink } from "../../packages/toolrelay/src/transport/local-link.js";
import { letTimePass, scaled, sleepUnlessAborted, until, within } from "./support/wait.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function later<T extends { close(): Promise<void> | void }>(resource: T): T {
  cleanups.push(() => resource.close());
  return resource;
}

/** A tool that works until its signal aborts (or `ms` passes), counting executions per tool_call_id. */
function waitingTool(name: string, executions: Map<string, number>, ms = 60_000) {
  return defineTool({
    name,
    description: `${name}: waits`,
    inputSchema: z.object({}),
    async execute(_input, { signal, toolCallId }) {
      executions.set(toolCallId, (executions.get(toolCallId) ?? 0) + 1);
      await sleepUnlessAborted(ms, signal);
      return `${name} done`;
    },
  });
}

async function openSession(
  url: string,
  options: Omit<Partial<SessionOptions>, "backend"> & { backend?: Record<string, unknown> },
): Promise<Session> {
  const { backend, ...rest } = options;
  const session = await createSession({
    backend: { kind: "local", url, pingIntervalMs: 0, ...backend },
    agent: { create: { model: "scripted/targeted" } },
    ...rest,
  } as SessionOptions);
  session.on("error", () => undefined);
  return later(session);
}

/** When the link left "open" (the session noticed the loss), as Date.now() values. */
function lossTimes(session: Session): number[] {
  const times: number[] = [];
  session.on("connection-state-change", ({ state, previous }) => {
    if (previous === "open" && state !== "open") times.push(Date.now());
  });
  return times;
}

describe("half-open link", () => {
  for (const pingIntervalMs of [100, 250]) {
    it(`is detected within pingIntervalMs + one interval (pingIntervalMs ${pingIntervalMs} → ≤ ${2 * pingIntervalMs} ms), then reconnected`, async () => {
      const executions = new Map<string, number>();
      const runtime = later(await startScriptedRuntime({ script: async (turn) => void (await turn.callTool("hold", {})) }));
      const proxy = later(await startFaultProxy({ target: { host: "127.0.0.1", port: runtime.port } }));
      const session = await openSession(`ws://127.0.0.1:${proxy.port}/ws`, {
        backend: { pingIntervalMs, pongTimeoutMs: pingIntervalMs, connectTimeoutMs: 1_000 },
        tools: [waitingTool("hold", executions)],
      });
      const losses = lossTimes(session);
      const turn = session.send("go");
      await until(() => executions.size === 1, "tool running");
      // On purpose: a few heartbeats go by on the healthy link, with no false alarm.
      await letTimePass(2 * pingIntervalMs + 50);
      expect(losses).toEqual([]);
      const blackholedAt = Date.now();
      proxy.blackhole(true);
      await expect(within(turn.result, "turn fails on the dead link", 3 * pingIntervalMs + 200)).rejects.toMatchObject({
        code: "CONNECTION_CLOSED",
      });
      const detectedAfter = losses[0]! - blackholedAt;
      console.log(`half-open figures ${JSON.stringify({ pingIntervalMs, detectedAfterMs: detectedAfter, boundMs: 2 * pingIntervalMs })}`);
      expect(detectedAfter).toBeGreaterThan(0);
      expect(detectedAfter).toBeLessThanOrEqual(2 * pingIntervalMs + scaled(30));
      proxy.blackhole(false);
      await until(() => session.state === "open", "reconnected through the proxy", 3_000);
      await until(
        () => runtime.registrations().some((registration) => registration.name === "hold" && registration.connectionId !== "app-server-0"),
        "tools registered again",
      );
      expect(proxy.stats.halfOpenConnections).toBe(0);
    });
  }

  it("the default heartbeat is no tighter than the app-server's: 30 s pings, dead after 60 s more of silence (≤ 90 s)", async () => {
    // The bound is pingIntervalMs + pongTimeoutMs (one interval to send the ping, the deadline to
    // miss every answer), shown above on real sockets. Here: what a default LocalLink actually arms.
    const runtime = later(await startScriptedRuntime({ script: () => undefined }));
    const armed: Array<{ delayMs: number; callback: () => void; handle: NodeJS.Timeout }> = [];
    const timers = {
      setTimeout: (callback: () => void, delayMs: number) => {
        const handle = setTimeout(callback, delayMs);
        armed.push({ delayMs, callback, handle });
        return handle;
      },
      clearTimeout: (handle: unknown) => clearTimeout(handle as NodeJS.Timeout),
      now: () => Date.now(),
    };
    const link = new LocalLink({ url: runtime.url, timers });
    cleanups.push(() => link.close());
    await link.connect();
    const delays = () => armed.map((timer) => timer.delayMs).filter((delay) => delay !== 10_000); // 10 s: the handshake deadline
    expect(delays()).toEqual([30_000]);
    // The ping timer fires (run by hand): it pings and arms the 60 s deadline and the next ping.
    const ping = armed.find((timer) => timer.delayMs === 30_000)!;
    clearTimeout(ping.handle);
    ping.callback();
    expect(delays()).toEqual([30_000, 60_000, 30_000]);
    expect(30_000 + 60_000).toBeLessThanOrEqual(90_000);
  });
});

describe("oversize frame", () => {
  it("closes only its socket (1009); the calls on it settle within 100 ms; other sessions carry on; the link reconnects", async () => {
    const executions = new Map<string, number>();
    let release!: () => void;
    const calledOut = new Promise<void>((resolve) => (release = resolve));
    let running = 0;
    const runtime = later(
      await startScriptedRuntime({
        script: async (turn: ScriptedTurn) => {
          running++;
          try {
            if (turn.userText === "big") {
              const calls = ["a", "b", "c"].map((id) => turn.callTool("hold", {}, { toolCallId: `big-${id}` }));
              await calledOut;
              await turn.say("x".repeat(200_000)); // > the session's maxPayload of 64 KiB
              await Promise.all(calls);
            } else if (turn.userText === "other") {
              await turn.callTool("quick", {});
              await turn.say("other done");
            } else {
              await turn.say("fresh");
            }
          } finally {
            running--;
          }
        },
      }),
    );
    // ws reports the oversize frame as an 'error' (WS_ERR_UNSUPPORTED_MESSAGE_LENGTH, status 1009) and sends close 1009.
    const socketErrors: string[] = [];
    class ObservedWebSocket extends WebSocket {
      constructor(address: string, options?: WebSocket.ClientOptions) {
        super(address, options);
        this.on("error", (error: Error & { code?: string }) => socketErrors.push(error.code ?? error.message));
      }
    }
    const session = await openSession(runtime.url, {
      backend: { maxPayload: 64 * 1024, backoff: { initialDelayMs: 20 }, WebSocket: ObservedWebSocket as unknown as typeof WebSocket },
      tools: [waitingTool("hold", executions)],
    });
    const losses = lossTimes(session);
    let quickRelease!: () => void;
    const quickGate = new Promise<void>((resolve) => (quickRelease = resolve));
    const quick = defineTool({
      name: "quick",
      description: "quick",
      inputSchema: z.object({}),
      execute: async () => {
        await quickGate;
        return "quick done";
      },
    });
    const bystander = await openSession(runtime.url, { tools: [quick] });
    const bystanderLosses = lossTimes(bystander);

    const other = bystander.send("other");
    await until(() => runtime.calls.some((record) => record.toolName === "quick"), "bystander call pending");
    const big = session.send("big");
    await until(() => executions.size === 3, "three calls running on the socket");
    const failed = big.result.then(
      () => undefined,
      (error: unknown) => ({ error, at: Date.now() }),
    );
    release();
    const outcome = await within(failed, "big turn fails", 2_000);
    expect(outcome?.error).toMatchObject({ code: "CONNECTION_CLOSED" });
    const closedAt = losses[0]!;
    expect(socketErrors).toEqual(["WS_ERR_UNSUPPORTED_MESSAGE_LENGTH"]);
    // The calls on the closed socket settle within 100 ms of the close: the runtime drops them
    // (status connection-closed) and the session's turn has already failed.
    const bigRecords = () => runtime.calls.filter((record) => record.toolCallId.startsWith("big-"));
    await until(() => bigRecords().length === 3 && bigRecords().every((record) => record.status !== "pending"), "big calls settled", 100);
    expect(bigRecords().map((record) => record.status)).toEqual(["connection-closed", "connection-closed", "connection-closed"]);
    console.log(
      `oversize figures ${JSON.stringify({ turnFailedAfterCloseMs: outcome!.at - closedAt, runtimeCallsSettled: bigRecords().map((record) => record.status) })}`,
    );
    expect(outcome!.at - closedAt).toBeLessThanOrEqual(scaled(100));
    // Only that socket: the other session's call is still pending, and then answered.
    expect(bystanderLosses).toEqual([]);
    quickRelease();
    await expect(within(other.result, "bystander turn", 2_000)).resolves.toMatchObject({ stopReason: "end_turn", text: "other done" });
    // The link reconnects and registers the tools again; a fresh turn works; nothing ran twice.
    await until(() => session.state === "open", "reconnected", 2_000);
    await until(() => running === 0, "runtime idle");
    await expect(within(session.send("fresh").result, "fresh turn", 2_000)).resolves.toMatchObject({
      stopReason: "end_turn",
      text: "fresh",
    });
    expect(runtime.registrations().filter((registration) => registration.name === "hold")).toHaveLength(1);
    expect([...executions.values()]).toEqual([1, 1, 1]);
  });
});

describe("runtime killed and restarted on the same port mid-call", () => {
  it("reconnects (first retry ≤ 100 ms, jittered backoff), registers the tools again, and never re-runs the call", async () => {
    const executions = new Map<string, number>();
    const attempts: number[] = [];
    class RecordingWebSocket extends WebSocket {
      constructor(address: string, options?: WebSocket.ClientOptions) {
        attempts.push(Date.now());
        super(address, options);
      }
    }
    const script = async (turn: ScriptedTurn) => {
      if (turn.userText === "call") await turn.callTool("hold", {}, { toolCallId: "restart-1" });
      else await turn.say(`fresh on ${turn.connectionId}`);
    };
    const first = await startScriptedRuntime({ script });
    const port = first.port;
    let second: ScriptedRuntime | undefined;
    cleanups.push(async () => {
      await first.close();
      await second?.close();
    });
    const session = await openSession(first.url, {
      backend: { WebSocket: RecordingWebSocket as unknown as typeof WebSocket },
      tools: [waitingTool("hold", executions, 400)],
    });
    const losses = lossTimes(session);
    const turn = session.send("call");
    await until(() => executions.size === 1, "call running");
    const attemptsBefore = attempts.length;
    await first.close();
    await expect(within(turn.result, "turn fails", 1_000)).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    const droppedAt = losses[0]!;
    await until(() => attempts.length >= attemptsBefore + 4, "four reconnect attempts while the runtime is down", 3_000);
    second = await startScriptedRuntime({ script, port });
    await until(() => session.state === "open", "reconnected to the restarted runtime", 3_000);

    const retries = attempts.slice(attemptsBefore);
    // First retry: the default backoff starts at 50 ms with jitter (25–50 ms).
    expect(retries[0]! - droppedAt).toBeLessThanOrEqual(scaled(100));
    // Later retries: exponential ceilings (100, 200, 400, ... ms, capped at 5 s) with full jitter.
    const gaps = retries.slice(1).map((at, index) => at - retries[index]!);
    for (const [index, gap] of gaps.entries()) expect(gap).toBeLessThanOrEqual(Math.min(5_000, 50 * 2 ** (index + 1)) + scaled(40));
    const ratios = gaps.slice(0, 3).map((gap, index) => gap / Math.min(5_000, 50 * 2 ** (index + 1)));
    console.log(
      `restart figures ${JSON.stringify({ firstRetryAfterDropMs: retries[0]! - droppedAt, retryGapsMs: gaps, attemptsWhileDown: retries.length })}`,
    );
    expect(ratios.some((ratio) => ratio < 0.9)).toBe(true);
    // The cap of the default backoff, at any attempt: ≤ 5 s.
    const worst = exponentialBackoff({ random: () => 0.999_999 });
    for (const attempt of [0, 5, 10, 20, 60]) expect(worst(attempt)).toBeLessThanOrEqual(5_000);

    // The tools are registered again on the new runtime (the link reports "open" before its
    // runtime_start is answered); a fresh turn works there.
    const restarted = second;
    await until(() => restarted.registrations().length > 0, "tools registered on the restarted runtime", 2_000);
    expect(restarted.registrations().map((registration) => registration.name)).toEqual(["hold"]);
    await expect(within(session.send("fresh").result, "fresh turn", 2_000)).resolves.toMatchObject({
      stopReason: "end_turn",
      text: expect.stringContaining("fresh on app-server-0"),
    });
    // The interrupted call finished in this process (its outcome is cached) and never ran again.
    await until(() => session.pendingToolCalls === 0, "interrupted call finished", 2_000);
    expect(executions.get("restart-1")).toBe(1);
    expect(first.calls.map((record) => record.status)).toEqual(["connection-closed"]);
  });
});
