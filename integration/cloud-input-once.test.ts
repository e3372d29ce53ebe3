/**
 * Issue 23, finding 5 (1): on the cloud path a turn's input is written once, also when its
 * `input_accepted` never comes. SDK (this process) ⇄ a proxy that kills one direction ⇄ the
 * reference relay (this process) ⇄ the REAL Letta Code listener (a process) ⇄ the scripted model.
 *
 * The relay → SDK direction dies right before the message is sent: the input reaches the
 * listener (which runs it), its `input_accepted` does not come back. The request times out: the
 * turn must fail `INPUT_UNCONFIRMED` then, and the input must never be written again — not when
 * the link finds the dead path and reconnects (on a fresh relay session: the relay's resume window
 * has passed, so nothing of the old one is redelivered), and not with the next turn. The real
 * runtime does not reliably deduplicate a repeated input (docs/protocol.md#input): a second copy
 * would start a second run. Counted from the listener's own `--debug` record of what it received.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type ConnectionStateChangeEvent } from "../packages/toolrelay/src/index.js";
import { DEFAULT_TURN_GAP_MS } from "../packages/toolrelay/src/session/turn-starter.js";
import { until } from "../test/support/wait.js";
import { startCloudFaultStack, type CloudFaultStack } from "./support/cloud-fault-stack.js";

const REQUEST_TIMEOUT_MS = 3_000;

describe("cloud: an input whose input_accepted timed out is never written again (real listener)", () => {
  let stack: CloudFaultStack;
  beforeAll(async () => {
    stack = await startCloudFaultStack({
      envName: "toolrelay-input-once",
      apiKey: "input-once-key",
      // No relay heartbeat (the SDK finds the dead path itself); a detached SDK session is forgotten after 300 ms.
      relay: { heartbeatIntervalMs: 0, sdkResumeWindowMs: 300 },
    });
  }, 60_000);
  afterAll(async () => stack?.stop());

  it("the turn fails INPUT_UNCONFIRMED at the request deadline; the input reaches the runtime once, across the reconnect and the next turn", async () => {
    const session = await createSession(
      stack.sessionOptions(
        // The dead path is found 5–6 s after it died (a ping within 1 s, then a 5 s deadline): after the
        // input's 3 s deadline, always. The first retry comes 1–2 s later, past the relay's resume
        // window: the new connection is a fresh relay session, which redelivers nothing of the old one.
        { pingIntervalMs: 1_000, pongTimeoutMs: 5_000, backoff: { initialDelayMs: 2_000, maxDelayMs: 2_000 } },
        { requestTimeoutMs: REQUEST_TIMEOUT_MS },
      ),
    );
    try {
      const errors: string[] = [];
      const changes: ConnectionStateChangeEvent[] = [];
      session.on("error", (error) => errors.push(`${error.code}: ${error.message}`));
      session.on("connection-state-change", (change) => changes.push(change));
      const warmUp = await session.send("warm up").result;
      expect(warmUp).toMatchObject({ stopReason: "end_turn", text: "pong" });
      // The session writes a turn's input no sooner than its turn gap after the last turn's end
      // (`turnGapMs`, docs/approvals.md); the request deadline starts at the write. Wait the gap out, so
      // the clock below starts with the write, not a second earlier.
      await new Promise((resolve) => setTimeout(resolve, DEFAULT_TURN_GAP_MS + 50));

      expect(stack.proxy.kill(["to-client"])).toBe(2); // relay → SDK dies; the SDK's writes still arrive
      const sentAt = Date.now();
      let failedAfterMs = 0;
      let outcome: { result?: unknown; error?: unknown } | undefined;
      void session.send("written exactly once").result.then(
        (result) => {
          outcome = { result };
        },
        (error: unknown) => {
          failedAfterMs = Date.now() - sentAt;
          outcome = { error };
        },
      );
      await until(() => outcome, "the turn settled", 20_000);
      // The link finds the dead path, reconnects on a fresh relay session and registers again.
      await until(() => changes.some((change) => change.state === "reconnecting"), "the dead path found", 10_000);
      await until(() => changes.at(-1)?.state === "open", "reconnected", 10_000);
      const next = await session.send("the next message").result;
      expect(next).toMatchObject({ stopReason: "end_turn", text: "pong" });

      const inputs = stack.listener.stdoutLines.filter((line) => line.includes('"type":"input"'));
      console.info(
        `[cloud input once] the turn settled ${outcome?.error ? `with ${(outcome.error as { code?: string }).code} ${failedAfterMs} ms after send` : "with a result"}; ` +
          `inputs the listener received: ${inputs.length} (warm up ${stack.inputsReceived("warm up")}, timed out ${stack.inputsReceived("written exactly once")}, next ${stack.inputsReceived("the next message")})`,
      );
      // Written once: the runtime got it (and ran it) once, never a second copy.
      expect(stack.inputsReceived("written exactly once")).toBe(1);
      expect(stack.model.requests.filter((request) => request.lastUserText.includes("written exactly once"))).toHaveLength(1);
      expect(stack.inputsReceived("the next message")).toBe(1);
      // And the caller was told at the request deadline that it may or may not have been received.
      expect(outcome?.error).toMatchObject({
        code: "INPUT_UNCONFIRMED",
        message: expect.stringContaining("may or may not have been received"),
      });
      expect(failedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 5);
      expect(failedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS + 1_000);
    } finally {
      await session.close();
    }
  }, 60_000);
});
