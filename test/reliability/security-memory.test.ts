/**
 * Memory a client can make the relay hold, measured in a separate relay process (the CLI). A
 * tenant's SDK sessions that never ack — one attached that keeps reconnecting, eight detached
 * inside their resume window — while its listener pushes 96 MiB of frames: each session is cut
 * with 4008 at its byte bound, the tenant never holds more than its budget, what the relay retains
 * after a GC grows by less than that budget, its peak RSS by less than half of what was pushed
 * (a ratio in the same run), and another tenant's session is not disturbed. Prints the figures.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { FakeListener } from "../relay/support/fake-listener.js";
import { waitForClose } from "../relay/support/frame-log.js";
import { RawStatusClient } from "../relay/support/raw-status-client.js";
import { startRelayProcess, type RelayProcess } from "../relay/support/relay-process.js";
import { letTimePass, until } from "./support/wait.js";

const KEY_HOARDER = "hoarder-tenant-key-0123456789";
const KEY_VICTIM = "victim-tenant-key-0123456789";
const MIB = 1024 * 1024;
const SESSION_BOUND = 1 * MIB;
const TENANT_BUDGET = 4 * MIB;
const FRAME_BYTES = 96 * 1024;
const FRAMES = 1_024;
const runtime = { agent_id: "agent-h", conversation_id: "conv-h" };
const victimRuntime = { agent_id: "agent-v", conversation_id: "conv-v" };

let relay: RelayProcess;
const cleanups: Array<() => void> = [];

beforeAll(async () => {
  relay = await startRelayProcess(
    { hoarder: [KEY_HOARDER], victim: [KEY_VICTIM] },
    [
      "--listener-mode",
      "single",
      "--heartbeat-interval-ms",
      "0",
      "--max-unacked-bytes",
      String(SESSION_BOUND),
      "--max-unacked-bytes-per-tenant",
      String(TENANT_BUDGET),
      "--sdk-resume-window-ms",
      "600000",
    ],
    ["--expose-gc"],
  );
});

afterAll(async () => {
  for (const cleanup of cleanups) cleanup();
  await relay?.stop();
});

function sessionOf(
  connectionId: string,
  apiKey: string,
  sessionId: string,
  scope: typeof runtime,
  autoAck: boolean,
): Promise<RawStatusClient> {
  return RawStatusClient.connect({
    url: relay.url,
    connectionId,
    apiKey,
    sessionId,
    agentId: scope.agent_id,
    conversationId: scope.conversation_id,
    autoAck,
  });
}

describe("memory under non-acking sessions (relay in its own process)", () => {
  it("cuts every non-acking session at its byte bound (4008), keeps the tenant under its budget, and the relay's RSS grows by a small fraction of what was pushed", async () => {
    const hoarder = await FakeListener.start(relay.httpUrl, KEY_HOARDER, { mode: "single", deviceId: "device-h" });
    const victimListener = await FakeListener.start(relay.httpUrl, KEY_VICTIM, { mode: "single", deviceId: "device-v" });
    cleanups.push(
      () => hoarder.terminate(),
      () => victimListener.terminate(),
    );
    const hoarderId = hoarder.answer.connectionId;
    for (let index = 1; index <= 8; index++) {
      const detached = await sessionOf(hoarderId, KEY_HOARDER, `detached-${index}`, runtime, false);
      detached.terminate(); // detached inside its (10-minute) resume window: frames for it are kept
    }
    const victim = await sessionOf(victimListener.answer.connectionId, KEY_VICTIM, "victim", victimRuntime, true);
    cleanups.push(() => victim.terminate());
    let reader = await sessionOf(hoarderId, KEY_HOARDER, "reader", runtime, false);
    const cuts: number[] = [];
    let readerBytes = 0;
    let largestBeforeCut = 0;
    let reconnects = 0;
    const watch = (client: RawStatusClient): void => {
      client.stream.on("message", (data: Buffer) => (readerBytes += data.length));
      void waitForClose(client.stream, 600_000).then(({ code }) => {
        cuts.push(code);
        largestBeforeCut = Math.max(largestBeforeCut, readerBytes);
        readerBytes = 0;
        if (reconnects++ < 20)
          void sessionOf(hoarderId, KEY_HOARDER, "reader", runtime, false).then(
            (next) => {
              watch(next);
              reader = next;
            },
            () => {},
          );
      });
    };
    watch(reader);

    const baseline = (await relay.stats(KEY_HOARDER, { gc: true })).memory;
    const retainedOf = (memory: NodeJS.MemoryUsage) => memory.heapUsed + memory.external;
    const pad = "m".repeat(FRAME_BYTES);
    let peakRss = baseline.rss;
    let peakTenantBytes = 0;
    for (let index = 1; index <= FRAMES; index++) {
      hoarder.sendStream({ type: "stream_delta", runtime, event_seq: index, delta: { message_type: "assistant_message", content: pad } });
      if (index % 8 === 0)
        victimListener.sendStream({
          type: "stream_delta",
          runtime: victimRuntime,
          event_seq: index,
          delta: { message_type: "assistant_message", content: "v" },
        });
      if ((hoarder.control?.bufferedAmount ?? 0) > MIB)
        await until(() => (hoarder.control?.bufferedAmount ?? 0) <= MIB, "the hoarder's socket to drain", 30_000);
      if (index % 8 === 0) {
        const stats = await relay.stats(KEY_HOARDER);
        peakRss = Math.max(peakRss, stats.memory.rss);
        peakTenantBytes = Math.max(peakTenantBytes, stats.tenant.unackedBytes);
      }
    }
    await victim.waitFor("stream_delta", { channel: "stream", where: (frame) => frame.event_seq === FRAMES, timeoutMs: 30_000 });
    let after = await relay.stats(KEY_HOARDER);
    peakRss = Math.max(peakRss, after.memory.rss);
    // What is retained once the relay has handled everything pushed: the least of a few collected samples.
    for (let sample = 0; sample < 5; sample++) {
      await letTimePass(200); // on purpose: samples some time apart
      const collected = await relay.stats(KEY_HOARDER, { gc: true });
      if (sample === 0 || retainedOf(collected.memory) < retainedOf(after.memory)) after = collected;
    }
    const pushed = FRAMES * FRAME_BYTES;
    const growth = peakRss - baseline.rss;
    const retainedGrowth = retainedOf(after.memory) - retainedOf(baseline);
    console.info(
      `[memory] pushed ${(pushed / MIB).toFixed(0)} MiB to 9 non-acking sessions (session bound ${SESSION_BOUND / MIB} MiB, tenant budget ${TENANT_BUDGET / MIB} MiB): ` +
        `relay RSS ${(baseline.rss / MIB).toFixed(1)} → peak ${(peakRss / MIB).toFixed(1)} MiB (+${(growth / MIB).toFixed(1)} MiB, ${((growth / pushed) * 100).toFixed(1)}% of pushed, garbage included); ` +
        `retained (heap + external, after GC) ${retainedGrowth >= 0 ? "+" : ""}${(retainedGrowth / MIB).toFixed(2)} MiB; ` +
        `tenant held at most ${(peakTenantBytes / MIB).toFixed(2)} MiB; reader cut ${cuts.length}× (codes ${[...new Set(cuts)].join(",")}), ` +
        `at most ${(largestBeforeCut / 1024).toFixed(0)} KiB received before a cut; sessions left ${after.tenant.sessions}`,
    );
    expect(cuts.length).toBeGreaterThan(0);
    expect(new Set(cuts)).toEqual(new Set([4008]));
    expect(largestBeforeCut).toBeLessThanOrEqual(SESSION_BOUND + 2 * FRAME_BYTES);
    expect(peakTenantBytes).toBeLessThanOrEqual(TENANT_BUDGET);
    expect(after.tenant.unackedBytes).toBeLessThanOrEqual(TENANT_BUDGET);
    expect(retainedGrowth).toBeLessThan(TENANT_BUDGET);
    expect(growth).toBeLessThan(pushed / 2);
    expect(victim.control.readyState).toBe(WebSocket.OPEN);
    expect(victim.logs.stream.ofType("stream_delta")).toHaveLength(FRAMES / 8);
    const victimUsage = await relay.stats(KEY_VICTIM);
    expect(victimUsage.tenant).toMatchObject({ tenant: "victim", sessions: 1 });
    reader.terminate();
  }, 240_000);
});
