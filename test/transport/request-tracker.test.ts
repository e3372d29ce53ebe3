/**
 * RequestTracker over a real LocalLink and a real scripted runtime: a request whose frame the link
 * refuses to encode (INVALID_FRAME) must reject with that error and leave nothing registered —
 * before the fix it stayed registered, and the session's close (rejectAll with ABORTED) rejected a
 * promise nobody held: an unhandled rejection that killed the caller's process.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import { startScriptedRuntime, type ScriptedRuntime } from "../../packages/toolrelay/src/testing/index.js";
import { LocalLink } from "../../packages/toolrelay/src/transport/local-link.js";
import { RequestTracker } from "../../packages/toolrelay/src/transport/request-tracker.js";
import type { OutboundFrame } from "../../packages/toolrelay/src/wire/index.js";
import { letTimePass } from "../support/wait.js";

let runtime: ScriptedRuntime | undefined;
let link: LocalLink | undefined;
afterEach(async () => {
  await link?.close();
  await runtime?.close();
});

describe("RequestTracker", () => {
  it("rejects a frame the link cannot encode with INVALID_FRAME, keeps nothing, and rejectAll then leaves no unhandled rejection", async () => {
    runtime = await startScriptedRuntime({ script: () => undefined });
    link = new LocalLink({ url: runtime.url, pingIntervalMs: 0 });
    await link.connect();
    const tracker = new RequestTracker(link);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const frame = { type: "runtime_start", request_id: "rs-bad", agent_id: "agent-1", mode: "default" } as unknown as OutboundFrame & {
        request_id: string;
      };
      await expect(tracker.request(frame, { responseType: "runtime_start_response", timeoutMs: 1_000 })).rejects.toMatchObject({
        code: "INVALID_FRAME",
        message: expect.stringContaining("mode"),
      });
      expect(tracker.pendingCount).toBe(0);
      tracker.rejectAll(new ToolrelayError("ABORTED", "the session was closed"));
      await letTimePass(20); // on purpose: an unhandled rejection would be reported within this window
      expect(unhandled).toEqual([]);
      expect(runtime.frames).toEqual([]); // nothing was written
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("rejects with CONNECTION_CLOSED when the link is not open, keeping nothing", async () => {
    link = new LocalLink({ url: "ws://127.0.0.1:9/ws", pingIntervalMs: 0 });
    const tracker = new RequestTracker(link);
    await expect(
      tracker.request(
        { type: "sync", request_id: "s-1", runtime: { agent_id: "a", conversation_id: "c" } },
        { responseType: "sync_response" },
      ),
    ).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    expect(tracker.pendingCount).toBe(0);
  });
});
