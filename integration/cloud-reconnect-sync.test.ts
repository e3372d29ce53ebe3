/**
 * Issue 23, finding 5 (2): the `sync` a session sends after a cloud reconnect. SDK (this process)
 * ⇄ a proxy that kills one direction ⇄ the reference relay (this process) ⇄ the REAL Letta Code
 * listener (a process) ⇄ the scripted model.
 *
 * In `standard` mode the runtime asks permission (`control_request` can_use_tool) before each
 * client tool call. The turn's first call runs normally; as it runs, the relay → SDK direction
 * dies. The model's second call comes 1.5 s later, so its permission request is written while the
 * SDK cannot hear (the SDK finds the dead path 2–3 s after it died and is back 1–2 s after that),
 * and the relay forgets the SDK's session before it comes back (resume window 300 ms), so nothing
 * redelivers it. The turn can only go on if the runtime replays the pending request to the new
 * connection.
 *
 * What replays it, measured against letta-code 0.32.18: the re-registration `runtime_start`
 * already does (a successful `runtime_start` replays the runtime's state unless it carries
 * `recover_approvals: false` / `force_device_status: false`, which the SDK does not send), and
 * the `sync` after it (`recover_approvals: true`) does it again. With the `sync` deleted the turn
 * still finishes here, so the test also holds the session to the reconnect sequence the docs
 * promise (docs/cloud.md "Reconnect": `runtime_start` with the full tool set, then a `sync`)
 * as the listener recorded it — the `sync` is the one recovery that does not depend on what a
 * runtime does on `runtime_start`. The SDK's own stall probe and gap syncs ask with
 * `recover_approvals: false` and cannot stand in for it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSession, defineTool, type ConnectionStateChangeEvent } from "../packages/toolrelay/src/index.js";
import type { ModelScript } from "../test/support/scripted-model-server.js";
import { until } from "../test/support/wait.js";
import { startCloudFaultStack, type CloudFaultStack } from "./support/cloud-fault-stack.js";

const script: ModelScript = (request) => {
  const last = request.lastMessage;
  if (last?.role === "tool") {
    const results = request.toolResults.map((result) => result.text).join("\n");
    if (results.includes("noted first")) return { toolCalls: [{ name: "note", arguments: { text: "second" } }], delayMs: 1_500 };
    return { text: `done: ${results}` };
  }
  if (request.lastUserText.includes("two notes")) return { toolCalls: [{ name: "note", arguments: { text: "first" } }] };
  return { text: "pong" };
};

describe("cloud: a permission request sent while the SDK was away, and the sync after the reconnect (real listener)", () => {
  let stack: CloudFaultStack;
  beforeAll(async () => {
    stack = await startCloudFaultStack({
      envName: "toolrelay-reconnect-sync",
      apiKey: "reconnect-sync-key",
      script,
      // No relay heartbeat (the SDK finds the dead path itself); a detached SDK session is forgotten after 300 ms.
      relay: { heartbeatIntervalMs: 0, sdkResumeWindowMs: 300 },
    });
  }, 60_000);
  afterAll(async () => stack?.stop());

  it("the turn gets the second permission request after the reconnect, runs each call once and finishes; the re-registration is followed by a sync", async () => {
    const notes: string[] = [];
    const note = defineTool({
      name: "note",
      description: "Write a note",
      inputSchema: z.object({ text: z.string() }),
      execute: ({ text }) => {
        notes.push(text);
        if (text === "first") stack.proxy.kill(["to-client"]); // relay → SDK dies while the first call runs
        return `noted ${text}`;
      },
    });
    const session = await createSession(
      stack.sessionOptions(
        // Dead path found within 1 s + 2 s; the first retry 1–2 s later, past the relay's resume window.
        { pingIntervalMs: 1_000, pongTimeoutMs: 2_000, backoff: { initialDelayMs: 2_000, maxDelayMs: 2_000 } },
        { tools: [note], mode: "standard", requestTimeoutMs: 10_000 },
      ),
    );
    try {
      const errors: string[] = [];
      const changes: ConnectionStateChangeEvent[] = [];
      session.on("error", (error) => errors.push(`${error.code}: ${error.message}`));
      session.on("connection-state-change", (change) => changes.push(change));

      let outcome: { text?: string; stopReason?: string; error?: unknown } | undefined;
      void session.send("write two notes").result.then(
        (result) => {
          outcome = { text: result.text, stopReason: result.stopReason };
        },
        (error: unknown) => {
          outcome = { error };
        },
      );
      await until(() => notes.length === 1, "the first call ran", 15_000);
      await until(() => changes.some((change) => change.state === "reconnecting"), "the dead path found", 10_000);
      await until(() => changes.at(-1)?.state === "open", "reconnected", 10_000);
      await until(
        () => outcome,
        () =>
          `the turn ended (notes: ${JSON.stringify(notes)}; permission requests the listener sent: ${permissionRequests(stack)}; errors: ${errors.join(" | ")})`,
        20_000,
      );
      console.info(
        `[cloud reconnect sync] permission requests the listener sent: ${permissionRequests(stack)}; syncs it received: ${syncs(stack)}; ` +
          `link changes: ${changes.map((change) => change.state).join(" → ")}`,
      );
      expect(outcome).toEqual({ text: "done: noted second", stopReason: "end_turn" });
      expect(notes).toEqual(["first", "second"]);
      // The second call's permission request was sent while the SDK could not hear, and again to the new connection.
      expect(permissionRequests(stack)).toBeGreaterThanOrEqual(3);

      // The reconnect sequence as the listener received it: the re-registration, then a sync that recovers approvals.
      const received = receivedCommands(stack);
      const reRegistration = received.map((command) => command.type).lastIndexOf("runtime_start");
      expect(received.filter((command) => command.type === "runtime_start")).toHaveLength(2);
      const syncsAfter = received.slice(reRegistration + 1).filter((command) => command.type === "sync");
      expect(syncsAfter.filter((command) => command.recover_approvals === true && command.force_device_status === true)).toHaveLength(1);
    } finally {
      await session.close();
    }
  }, 60_000);
});

function permissionRequests(stack: CloudFaultStack): number {
  return stack.listener.stdoutLines.filter((line) => line.includes("send") && line.includes('"type":"control_request"')).length;
}

function syncs(stack: CloudFaultStack): number {
  return receivedCommands(stack).filter((command) => command.type === "sync").length;
}

/** The commands the listener printed as received (`← recv {…}`), in order; lifecycle lines and unparsable ones left out. */
function receivedCommands(stack: CloudFaultStack): Array<Record<string, unknown>> {
  return stack.listener.stdoutLines.flatMap((line) => {
    const at = line.indexOf("← recv  {");
    if (at === -1) return [];
    try {
      return [JSON.parse(line.slice(line.indexOf("{", at))) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}
