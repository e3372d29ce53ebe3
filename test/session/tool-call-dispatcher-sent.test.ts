/**
 * `ToolCallDispatcher.sentResponse`: the response the SDK last wrote for a tool call of the
 * session's runtime — what a client tool's `tool-result` event reports. A newer request for the
 * same tool_call_id (a provider reusing `call_0`) hides the older answer until it is answered; a
 * response the link did not take is not "sent"; other runtimes' calls are never remembered; the
 * memory is bounded. The link here is a recorder: the dispatcher only writes to it.
 */
import { EventEmitter } from "eventemitter3";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { SessionLog } from "../../packages/toolrelay/src/observability/logger.js";
import { SessionObserver } from "../../packages/toolrelay/src/observability/session-observer.js";
import { SessionTracing } from "../../packages/toolrelay/src/observability/telemetry.js";
import { OwnRuntime } from "../../packages/toolrelay/src/session/own-runtime.js";
import type { SessionEvents } from "../../packages/toolrelay/src/session/session-events.js";
import { ToolCallDispatcher } from "../../packages/toolrelay/src/session/tool-call-dispatcher.js";
import { defineTool, ToolRegistry } from "../../packages/toolrelay/src/tools/index.js";
import type { RuntimeLink } from "../../packages/toolrelay/src/transport/runtime-link.js";
import type { ExternalToolCallRequestFrame, OutboundFrame } from "../../packages/toolrelay/src/wire/index.js";
import { until } from "../support/wait.js";

const scope = { agent_id: "agent-1", conversation_id: "conv-1" };

async function dispatcher(options: { open?: () => boolean; gate?: Promise<void> } = {}) {
  const written: OutboundFrame[] = [];
  const link = Object.assign(new EventEmitter(), {
    connectionId: "connection-1",
    state: "open",
    epoch: 1,
    keepsPendingCallsAcrossReconnect: false,
    send(frame: OutboundFrame) {
      if (options.open?.() === false) return false;
      written.push(frame);
      return true;
    },
  }) as unknown as RuntimeLink;
  const echo = defineTool({
    name: "echo",
    description: "Echoes",
    inputSchema: z.object({ text: z.string() }),
    // A text starting with "wait" is answered once the test opens the gate.
    execute: async ({ text }) => {
      if (text.startsWith("wait")) await options.gate;
      return text;
    },
  });
  const registry = new ToolRegistry([echo]);
  const own = new OwnRuntime(undefined);
  own.scope = scope;
  const observer = new SessionObserver({
    log: new SessionLog(undefined, []),
    tracing: await SessionTracing.create(false),
    timers: systemTimers,
    logPayloads: false,
    scope: () => ({ agentId: scope.agent_id, conversationId: scope.conversation_id, connectionId: "connection-1" }),
  });
  // Built as a variable: the options may carry more than this test needs.
  const dispatcherOptions = {
    link,
    registry: () => registry,
    own,
    events: new EventEmitter<SessionEvents>(),
    timers: systemTimers,
    limits: { maxConcurrentCalls: 1_000 },
    observer,
    turn: () => "",
  };
  return { dispatcher: new ToolCallDispatcher(dispatcherOptions), written };
}

let requests = 0;
function request(toolCallId: string, text: string, runtime: typeof scope = scope): ExternalToolCallRequestFrame {
  return {
    type: "external_tool_call_request",
    request_id: `external-tool-${++requests}`,
    runtime,
    tool_call_id: toolCallId,
    tool_name: "echo",
    input: { text },
  };
}

describe("ToolCallDispatcher.sentResponse", () => {
  it("is the response written for the call: the same body the link got", async () => {
    const { dispatcher: calls, written } = await dispatcher();
    expect(calls.sentResponse("call_0")).toBeUndefined();
    calls.handle(request("call_0", "first"));
    await until(() => written.length === 1, "the answer");
    const frame = written[0] as { result?: unknown };
    expect(calls.sentResponse("call_0")).toEqual({ result: { content: [{ type: "text", text: "first" }] } });
    expect(calls.sentResponse("call_0")).toEqual({ result: frame.result });
  });

  it("a newer request for the same tool_call_id hides the older answer until it is answered", async () => {
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const { dispatcher: calls, written } = await dispatcher({ gate });
    calls.handle(request("call_0", "turn one"));
    await until(() => written.length === 1, "the first answer");
    calls.handle(request("call_0", "wait: turn two"));
    expect(calls.sentResponse("call_0")).toBeUndefined();
    openGate();
    await until(() => written.length === 2, "the second answer");
    expect(calls.sentResponse("call_0")).toEqual({ result: { content: [{ type: "text", text: "wait: turn two" }] } });
  });

  it("a response the link did not take was not sent", async () => {
    const { dispatcher: calls } = await dispatcher({ open: () => false });
    calls.handle(request("call_1", "lost"));
    await until(() => calls.table.runningCount === 0, "the call to settle");
    expect(calls.sentResponse("call_1")).toBeUndefined();
  });

  it("another runtime's request is not remembered", async () => {
    const { dispatcher: calls, written } = await dispatcher();
    calls.handle(request("call_2", "not ours", { agent_id: "agent-2", conversation_id: "conv-2" }));
    calls.handle(request("call_3", "ours"));
    await until(() => calls.sentResponse("call_3") !== undefined, "our answer");
    expect(calls.sentResponse("call_2")).toBeUndefined();
    expect(written).toHaveLength(1);
  });

  it("remembers the newest 256 calls", async () => {
    const { dispatcher: calls, written } = await dispatcher();
    for (let index = 0; index < 300; index++) calls.handle(request(`call_many_${index}`, `answer ${index}`));
    await until(() => written.length === 300, "every answer");
    expect(calls.sentResponse("call_many_0")).toBeUndefined();
    expect(calls.sentResponse("call_many_43")).toBeUndefined();
    expect(calls.sentResponse("call_many_44")).toEqual({ result: { content: [{ type: "text", text: "answer 44" }] } });
    expect(calls.sentResponse("call_many_299")).toEqual({ result: { content: [{ type: "text", text: "answer 299" }] } });
  });
});
