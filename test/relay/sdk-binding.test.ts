/**
 * The SDK's own cloud link against the relay when its socket URL lacks the conversation (a new
 * conversation: `agentId` only) or the agent too (a new agent): the session is bound by the
 * `runtime_start` it sends and the response routed back to it, gets that runtime's frames and
 * tool calls only, and resumes bound after a reconnect whose URL now names the runtime.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CloudLink } from "../../packages/toolrelay/src/transport/cloud-link.js";
import type { InboundFrame } from "../../packages/toolrelay/src/wire/index.js";
import type { JsonFrame } from "./support/frame-log.js";
import { RelayFixture, TEST_KEY } from "./support/relay-fixture.js";
import { until } from "../support/wait.js";

const fixture = new RelayFixture();
const links: CloudLink[] = [];
afterEach(async () => {
  for (const link of links.splice(0)) await link.close();
  await fixture.cleanup();
});

const tools = [{ tools: [{ name: "echo", description: "echo", parameters: { type: "object", properties: {} } }] }];

function cloudLink(
  connectionId: string,
  runtime: { agentId?: string; conversationId?: string },
): { link: CloudLink; frames: InboundFrame[] } {
  const link = new CloudLink({
    connectionId,
    apiKey: TEST_KEY,
    baseUrl: fixture.relay.httpUrl,
    runtime,
    pingIntervalMs: 0,
    backoff: { initialDelayMs: 10, maxDelayMs: 50 },
  });
  const frames: InboundFrame[] = [];
  link.on("frame", (frame) => frames.push(frame));
  link.on("error", () => {});
  links.push(link);
  return { link, frames };
}

describe("a session bound by its runtime_start (SDK cloud link)", () => {
  it.each([
    ["the agent only (a new conversation)", { agentId: "agent-1" }, { agent_id: "agent-1", create_conversation: {} }],
    ["nothing (a new agent and conversation)", {}, { create_agent: { body: {} }, create_conversation: {} }],
  ])(
    "URL naming %s: bound by the response, gets its runtime's frames and calls only, and stays bound across a reconnect",
    async (_name, urlRuntime, start) => {
      await fixture.start();
      const listener = await fixture.listener();
      const { connectionId } = listener.answer;
      const { link, frames } = cloudLink(connectionId, urlRuntime);
      await link.connect();
      const created = { agent_id: "agent-1", conversation_id: "conv-new" };
      link.send({ type: "runtime_start", request_id: "start-1", ...start, external_tools: tools } as never);
      await listener.logs.control.waitForType("runtime_start");
      // Before the answer the session is not bound: a frame of the runtime-to-be does not reach it
      // (sent on the same listener socket as the answer, so the relay handles it first).
      listener.sendControl({ type: "turn_finished", runtime: created, event_seq: 1, turn_id: "t-early", stop_reason: "end_turn" });
      listener.sendControl({ type: "runtime_start_response", request_id: "start-1", success: true, runtime: created });
      await until(() => frames.find((frame) => frame.type === "runtime_start_response"), "runtime_start_response");
      link.setRuntime({ agentId: created.agent_id, conversationId: created.conversation_id }); // what the session does
      listener.sendStream({
        type: "stream_delta",
        runtime: { agent_id: "agent-1", conversation_id: "conv-other" },
        event_seq: 2,
        delta: { message_type: "assistant_message", content: "hi" },
      });
      listener.sendStream({
        type: "stream_delta",
        runtime: created,
        event_seq: 3,
        delta: { message_type: "assistant_message", content: "hi" },
      });
      listener.sendControl({
        type: "external_tool_call_request",
        request_id: "external-tool-1",
        runtime: created,
        tool_call_id: "c1",
        tool_name: "echo",
        input: {},
      });
      await until(() => frames.find((frame) => frame.type === "external_tool_call_request"), "the tool call");
      await until(() => frames.find((frame) => frame.type === "stream_delta"), "the runtime's stream frame");
      expect(frames.filter((frame) => frame.type === "stream_delta").map((frame) => (frame as { event_seq?: number }).event_seq)).toEqual([
        3,
      ]);
      listener.sendControl({ type: "turn_finished", runtime: created, event_seq: 4, turn_id: "t-bound", stop_reason: "end_turn" });
      await until(() => frames.find((frame) => frame.type === "turn_finished"), "a control frame of the bound runtime");
      expect(frames.filter((frame) => frame.type === "turn_finished").map((frame) => (frame as { turn_id?: string }).turn_id)).toEqual([
        "t-bound",
      ]);

      const reconnected = new Promise<void>((resolve) => link.once("reconnected", () => resolve()));
      const attached = fixture.nextEvent("sdk-attached");
      fixture.relay.dropSdkSockets(connectionId, { code: 1012 });
      await reconnected;
      await attached;
      const urls = fixture.relay.environment(connectionId);
      expect(urls?.sdkSessions).toBe(1); // the same session, resumed
      listener.sendControl({
        type: "external_tool_call_request",
        request_id: "external-tool-2",
        runtime: created,
        tool_call_id: "c2",
        tool_name: "echo",
        input: {},
      });
      await until(
        () => frames.find((frame) => frame.type === "external_tool_call_request" && frame.request_id === "external-tool-2"),
        "the second call",
      );
      link.send({
        type: "external_tool_call_response",
        request_id: "external-tool-2",
        result: { content: [{ type: "text", text: "ok" }] },
      });
      const answer = await listener.logs.control.waitForType("external_tool_call_response");
      expect(answer).toMatchObject({ request_id: "external-tool-2" } satisfies JsonFrame);
    },
  );

  it("a runtime_start for another agent than the URL's is refused with a clear runtime_start_response", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { link, frames } = cloudLink(listener.answer.connectionId, { agentId: "agent-1" });
    await link.connect();
    link.send({
      type: "runtime_start",
      request_id: "start-x",
      agent_id: "agent-2",
      create_conversation: {},
      external_tools: tools,
    } as never);
    const refused = await until(() => frames.find((frame) => frame.type === "runtime_start_response"), "the refusal");
    expect(refused).toMatchObject({ request_id: "start-x", success: false, error: expect.stringContaining("another agent") });
    expect(listener.logs.control.ofType("runtime_start")).toHaveLength(0);
  });
});
