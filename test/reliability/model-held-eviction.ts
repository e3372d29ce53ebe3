/**
 * BUG held-response-evicted (found by the model-based schedules): a response held
 * for a request id while the link is down lives only inside its replay-cache
 * entry. When that entry is evicted before the link comes back — by count
 * (`replay.maxEntries` settlements while down) or by age (`replay.maxAgeMs`) —
 * the held response is silently lost: `linkUp({ redeliver: true })` sends
 * nothing for that request id, and the tombstone only remembers "sent" ids.
 * The runtime kept the call (cloud) and never gets an outcome (P1), where P2
 * promises an explicit "outcome unknown" past the cache.
 *
 * Shrunk counterexample: request(t0, async, timeout 0), linkDown,
 * advance(600000), linkUp(true) — the timeout response is held, ages out, and
 * r0 is never answered.
 *
 * BUG held-evicted-answered-twice (found by the same model against the first
 * fix, which delivers held responses from evicted entries): the tombstone was
 * written at eviction, when r0 was still "held", so after r0's response is sent
 * from the evicted entry a redelivered r0 is answered "expired" — a second
 * frame for one request id. Shrunk counterexample: linkDown, burst(0, t0, 4),
 * burst(0, t4, 5), advance(1000), linkUp(true), repeatRequestId(r0).
 */
import { CallTable, type CallOutcome } from "../../src/calls/index.js";
import type { TimerHandle, Timers } from "../../src/internal/timers.js";

export interface HeldEvictionResult {
  /** Request ids that got a frame after the link came back, one entry per frame. */
  answered: string[];
  /** What `request` answered when r1 arrived AGAIN after the link came back (a redelivered frame). */
  repeatDisposition: string;
  /** The frame texts, by request id. */
  texts: Map<string, string>;
}

const ok = (text: string): CallOutcome => ({ kind: "ok", content: [{ type: "text", text }] });

/** Timers with a hand-driven clock; nothing here ever fires on its own. */
function manualTimers(): Timers & { advance(ms: number): void } {
  let now = 0;
  const pending = new Map<object, { at: number; callback: () => void }>();
  return {
    setTimeout(callback, delayMs): TimerHandle {
      const handle = {};
      pending.set(handle, { at: now + delayMs, callback });
      return handle;
    },
    clearTimeout(handle) {
      pending.delete(handle as object);
    },
    now: () => now,
    advance(ms) {
      now += ms;
      for (const [handle, timer] of [...pending]) {
        if (timer.at > now) continue;
        pending.delete(handle);
        timer.callback();
      }
    },
  };
}

/**
 * Settle calls while the link is down until the first one's held response is
 * evicted (`by: "count"`: one more settlement than `maxEntries`; `by: "age"`:
 * the clock passes `maxAgeMs`), then `linkUp({ redeliver: true })`.
 */
export function heldResponseEvictionScenario(by: "count" | "age"): HeldEvictionResult {
  const timers = manualTimers();
  let linkUp = true;
  const texts = new Map<string, string>();
  const frames: string[] = [];
  const table = new CallTable({
    timers,
    reconnectGraceMs: 3_600_000,
    replay: { maxEntries: 2, maxAgeMs: 1_000 },
    deliver(requestId, response) {
      if (!linkUp) return false;
      texts.set(requestId, "result" in response ? JSON.stringify(response.result.content) : response.error);
      frames.push(requestId);
      return true;
    },
  });
  try {
    linkUp = false;
    table.linkDown();
    table.request({ requestId: "r1", key: key("t1"), toolName: "tool", timeoutMs: 60_000, run: () => ok("one") });
    if (by === "count") {
      table.request({ requestId: "r2", key: key("t2"), toolName: "tool", timeoutMs: 60_000, run: () => ok("two") });
      table.request({ requestId: "r3", key: key("t3"), toolName: "tool", timeoutMs: 60_000, run: () => ok("three") });
    } else {
      timers.advance(1_000);
    }
    linkUp = true;
    table.linkUp({ redeliver: true });
    // The runtime redelivers r1's request: at most one frame per request id, so no second answer.
    const repeatDisposition = table.request({ requestId: "r1", key: key("t1"), toolName: "tool", timeoutMs: 60_000, run: () => ok("again") });
    return { answered: frames, texts, repeatDisposition };
  } finally {
    table.close();
  }
}

function key(toolCallId: string) {
  return { connectionId: "c1", agentId: "a1", conversationId: "v1", toolCallId };
}

/** True once the SDK answers a held request id whose cache entry was evicted (the bug is fixed). */
export function heldResponsesSurviveEviction(): boolean {
  return heldResponseEvictionScenario("count").answered.includes("r1") && heldResponseEvictionScenario("age").answered.includes("r1");
}
