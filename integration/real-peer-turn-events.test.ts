/**
 * Turn events through the REAL Letta Code app-server (0.32.18, a process) and a scripted model:
 * the model calls the built-in `Agent` tool, the runtime runs a real subagent (its own headless
 * process, on the same scripted model) and forwards its deltas on the parent's scope with
 * `subagent_id`; a real Bash call streams its output as snapshots. The session's turn must keep
 * the subagent out of its own text, tool calls and stop reason, and give one tool-result per call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session } from "../packages/toolrelay/src/index.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import {
  startScriptedModelServer,
  type ModelRequest,
  type ScriptedModelServer,
  type ScriptedReply,
} from "../test/support/scripted-model-server.js";
import { letTimePass } from "../test/support/wait.js";

function script(request: ModelRequest): ScriptedReply {
  const user = request.lastUserText;
  const afterTool = request.lastMessage?.role === "tool";
  if (user.includes("SUBAGENT-TASK")) {
    if (afterTool) return { text: "SUBAGENT FINISHED" };
    return { text: "SUBAGENT SPEAKS", toolCalls: [{ name: "Bash", arguments: { command: "echo from-subagent", description: "echo" } }] };
  }
  if (user.includes("<task-notification>")) return { text: "noted" };
  if (user.includes("DELEGATE")) {
    // Hold the parent's answer so that the subagent streams during the parent's turn.
    if (afterTool) return { text: "parent done", delayMs: 4_000 };
    return {
      text: "delegating ",
      toolCalls: [
        { name: "Agent", arguments: { subagent_type: "general-purpose", description: "say hi", prompt: "SUBAGENT-TASK: say hi" } },
      ],
    };
  }
  if (user.includes("BASH")) {
    if (afterTool) return { text: "counted" };
    return {
      toolCalls: [{ name: "Bash", arguments: { command: "for i in 1 2 3; do echo line$i; sleep 0.3; done", description: "count" } }],
    };
  }
  return { text: "pong" };
}

describe("turn events against the real app-server", () => {
  let model: ScriptedModelServer;
  let peer: LettaAppServer;
  let session: Session;

  beforeAll(async () => {
    model = await startScriptedModelServer({ script });
    peer = await startLettaAppServer({ modelUrl: model.url });
    session = await createSession({
      backend: { kind: "local", url: peer.url },
      agent: { create: { model: model.modelHandle, name: "toolrelay-turn-events" } },
      mode: "unrestricted",
    });
  }, 60_000);
  afterAll(async () => {
    await session?.close();
    await peer?.stop();
    await model?.close();
  });

  it("a real subagent's text, tool calls and stop reason never become the parent turn's", async () => {
    const result = await session.send("DELEGATE please").result;
    const subagent = result.events.filter((event) => event.type === "subagent");
    expect(subagent.length).toBeGreaterThan(0); // the runtime really streamed a subagent during the turn
    expect(subagent.map((event) => event.type === "subagent" && event.event.type)).toEqual(
      expect.arrayContaining(["assistant", "tool-call", "tool-result"]),
    );
    expect(subagent.find((event) => event.type === "subagent" && event.event.type === "assistant")).toMatchObject({
      event: { text: "SUBAGENT SPEAKS" },
    });
    expect(result.text).toBe("delegating parent done");
    expect(result.text).not.toContain("SUBAGENT");
    expect(result.stopReason).toBe("end_turn");
    const own = result.events.filter((event) => event.type === "tool-call" || event.type === "tool-result");
    expect(own.map((event) => `${event.type}:${event.toolName}`)).toEqual(["tool-call:Agent", "tool-result:Agent"]);
    // The runtime then starts a <task-notification> turn by itself; let it finish before the next test.
    await model.waitForRequest((request) => request.lastUserText.includes("<task-notification>"), { timeoutMs: 20_000 });
    await letTimePass(500); // on purpose: the notification turn winds down (nothing of it reaches this session)
  }, 60_000);

  it("a real Bash call's streamed snapshots give tool-output events and exactly one tool-result", async () => {
    const result = await session.send("BASH please").result;
    const tools = result.events.filter(
      (event) => event.type === "tool-call" || event.type === "tool-output" || event.type === "tool-result",
    );
    expect(tools[0]).toMatchObject({ type: "tool-call", toolName: "Bash", owner: "runtime" });
    const results = tools.filter((event) => event.type === "tool-result");
    expect(results).toEqual([expect.objectContaining({ toolName: "Bash", isError: false, text: "line1\nline2\nline3\n" })]);
    const outputs = tools.filter((event) => event.type === "tool-output").map((event) => event.type === "tool-output" && event.text);
    expect(outputs.length).toBeGreaterThan(0);
    expect(outputs.at(-1)).toBe("line1\nline2\nline3");
    expect(tools.at(-1)?.type).toBe("tool-result");
    expect(result.text).toBe("counted");
  }, 60_000);
});
