/**
 * The one-tenant scenario, run against one relay (security-same-tenant.test.ts) or three cluster
 * nodes behind a balancer (security-same-tenant-cluster.test.ts). Inside one tenant (two keys, one
 * environment, two runtimes): forged tool answers, reads of another runtime's frames, `sessionId`
 * reuse, `request_id` reuse and listener sockets without (or with another) device id are refused;
 * the legitimate client of each thing keeps it. Every attempt is counted; prints the table.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { RelayOptions } from "../../../packages/relay/src/index.js";
import { FakeListener } from "../../relay/support/fake-listener.js";
import type { JsonFrame } from "../../relay/support/frame-log.js";
import { RawStatusClient, type RawStatusClientOptions } from "../../relay/support/raw-status-client.js";
import { letTimePass } from "../../support/wait.js";
import { AttemptTable, describeUpgrade, tryUpgrade } from "./attempt-table.js";
import type { TenancyRelay } from "./tenancy-scenario.js";

const KEY_1 = "team-key-one-0123456789";
const KEY_2 = "team-key-two-0123456789";
const runtime1 = { agent_id: "agent-1", conversation_id: "conv-1" };
const runtime2 = { agent_id: "agent-2", conversation_id: "conv-2" };
const tools = [{ tools: [{ name: "owned_tool", description: "S1's tool", parameters: { type: "object" } }] }];

/** The relay options of the scenario (a cluster adds its `cluster` part to the same). */
export const SAME_TENANT_RELAY_OPTIONS: RelayOptions = { tenants: { team: [KEY_1, KEY_2] }, heartbeatIntervalMs: 0 };

/** Where the scenario's clients connect (the relay, or the balancer in front of cluster nodes), and how it stops. */
export interface SameTenantTarget {
  relay: TenancyRelay;
  stop(): Promise<void>;
}

/** Defines the suite: `start` brings up the relay (or cluster) with {@link SAME_TENANT_RELAY_OPTIONS}. */
export function describeSameTenant(
  title: string,
  start: (options: RelayOptions) => Promise<SameTenantTarget>,
  setupTimeoutMs = 10_000,
): void {
  let target: SameTenantTarget;
  let relay: TenancyRelay;
  let listener: FakeListener;
  let connectionId: string;
  const clients: RawStatusClient[] = [];
  const table = new AttemptTable();

  async function client(options: Partial<RawStatusClientOptions>): Promise<RawStatusClient> {
    const opened = await RawStatusClient.connect({ url: relay.url, connectionId, apiKey: KEY_1, ...options });
    clients.push(opened);
    return opened;
  }

  beforeAll(async () => {
    target = await start(SAME_TENANT_RELAY_OPTIONS);
    relay = target.relay;
    listener = await FakeListener.start(relay.httpUrl, KEY_1, { deviceId: "device-team" });
    connectionId = listener.answer.connectionId;
  }, setupTimeoutMs);

  afterAll(async () => {
    for (const opened of clients) opened.terminate();
    listener?.terminate();
    await target?.stop();
  });

  function reached(type: string, requestId: string): boolean {
    return listener.logs.control.frames.some((frame) => frame.type === type && frame.request_id === requestId);
  }

  describe(title, () => {
    it("forged answers, foreign-runtime reads, sessionId and request_id reuse and device-less listener sockets are refused (0 succeed)", async () => {
      const owner = await client({ sessionId: "s1", agentId: runtime1.agent_id, conversationId: runtime1.conversation_id });
      owner.send({ type: "runtime_start", request_id: "start-s1", ...runtime1, external_tools: tools });
      await listener.logs.control.waitForType("runtime_start");
      const otherRuntime = await client({ sessionId: "s2", agentId: runtime2.agent_id, conversationId: runtime2.conversation_id });
      const unbound = await client({ sessionId: "s3" });
      const sameRuntimeOtherKey = await client({
        apiKey: KEY_2,
        sessionId: "s4",
        agentId: runtime1.agent_id,
        conversationId: runtime1.conversation_id,
      });
      listener.sendControl({
        type: "external_tool_call_request",
        request_id: "external-tool-1",
        runtime: runtime1,
        tool_call_id: "c1",
        tool_name: "owned_tool",
        input: { private: true },
      });
      await owner.waitFor("external_tool_call_request");

      const forge = (from: RawStatusClient, label: string) => async () => {
        from.send({
          type: "external_tool_call_response",
          request_id: "external-tool-1",
          result: { content: [{ type: "text", text: `forged by ${label}` }] },
        });
        await from.flush("control");
        return {
          refused:
            listener.logs.control.ofType("external_tool_call_response").length === 0 &&
            relay.environment(connectionId)!.outstandingCalls.includes("external-tool-1"),
          evidence: "not forwarded; the call is still the owner's",
        };
      };
      await table.attempt("forged answer", "from a session of another runtime", forge(otherRuntime, "s2"));
      await table.attempt("forged answer", "from a session bound to no runtime", forge(unbound, "s3"));
      await table.attempt(
        "forged answer",
        "from a session of the same runtime (another key) that does not own the call",
        forge(sameRuntimeOtherKey, "s4"),
      );
      const anonymous = await client({});
      await table.attempt("forged answer", "from an anonymous session", forge(anonymous, "anonymous"));

      await table.attempt("foreign-runtime read", "name runtime 1 in a sync from runtime 2's session", async () => {
        otherRuntime.send({ type: "sync", runtime: runtime1, request_id: "s2-sync-r1", recover_approvals: true });
        const answer = await otherRuntime.waitFor("sync_response", { where: (frame) => frame.request_id === "s2-sync-r1" });
        return {
          refused: answer.success === false && !reached("sync", "s2-sync-r1"),
          evidence: `sync_response success:false, not forwarded`,
        };
      });
      await table.attempt("foreign-runtime read", "name runtime 1 in an input from an unbound session", async () => {
        unbound.send({ type: "input", runtime: runtime1, request_id: "s3-input", payload: { kind: "create_message", messages: [] } });
        const answer = await unbound.waitFor("input_accepted", { where: (frame) => frame.request_id === "s3-input" });
        return {
          refused: answer.accepted === false && !reached("input", "s3-input"),
          evidence: `input_accepted accepted:false, not forwarded`,
        };
      });
      await table.attempt("foreign-runtime read", "runtime_start for runtime 1 from runtime 2's session", async () => {
        otherRuntime.send({ type: "runtime_start", request_id: "s2-start-r1", ...runtime1 });
        const answer = await otherRuntime.waitFor("runtime_start_response", { where: (frame) => frame.request_id === "s2-start-r1" });
        return {
          refused: answer.success === false && !reached("runtime_start", "s2-start-r1"),
          evidence: `runtime_start_response success:false, not forwarded`,
        };
      });
      await table.attempt("foreign-runtime read", "runtime_external_tools_update for runtime 1 from runtime 2's session", async () => {
        otherRuntime.send({
          type: "runtime_external_tools_update",
          request_id: "s2-tools-r1",
          updates: [{ runtimes: [runtime1], external_tools: [] }],
        });
        const answer = await otherRuntime.waitFor("runtime_external_tools_update_response", {
          where: (frame) => frame.request_id === "s2-tools-r1",
        });
        return {
          refused: answer.success === false && !reached("runtime_external_tools_update", "s2-tools-r1"),
          evidence: "refused, S1's tools untouched",
        };
      });
      await table.attempt("foreign-runtime read", "receive runtime 1's frames on runtime 2's and unbound sessions", async () => {
        listener.sendStream({
          type: "stream_delta",
          runtime: runtime1,
          event_seq: 10,
          delta: { message_type: "assistant_message", content: "private to runtime 1" },
        });
        listener.sendControl({ type: "turn_finished", runtime: runtime1, event_seq: 11, turn_id: "t", stop_reason: "end_turn" });
        await owner.waitFor("turn_finished");
        await letTimePass(100); // on purpose: none of it may reach another session within this window
        const leaked = [otherRuntime, unbound, anonymous].some((peer) =>
          [...peer.logs.control.frames, ...peer.logs.stream.frames].some((frame) => frame.event_seq === 10 || frame.event_seq === 11),
        );
        return { refused: !leaked, evidence: "only runtime 1's sessions got them" };
      });

      await table.attempt("sessionId reuse", "S1's sessionId with another key of the tenant", async () => {
        const outcome = await tryUpgrade(relay.statusUrl(connectionId, { channel: "control", sessionId: "s1" }), KEY_2);
        if (outcome.kind === "open") outcome.socket.terminate();
        return { refused: outcome.kind !== "open", evidence: describeUpgrade(outcome) };
      });
      await table.attempt("sessionId reuse", "S1's sessionId with S1's key but runtime 2 in the URL", async () => {
        const outcome = await tryUpgrade(
          relay.statusUrl(connectionId, {
            channel: "control",
            sessionId: "s1",
            ...{ agentId: runtime2.agent_id, conversationId: runtime2.conversation_id },
          }),
          KEY_1,
        );
        if (outcome.kind === "open") outcome.socket.terminate();
        return { refused: outcome.kind !== "open", evidence: describeUpgrade(outcome) };
      });
      await table.attempt("sessionId reuse", "runtime 1's identity (no sessionId) with another key gets S1's held frames", async () => {
        const stranger = await client({
          apiKey: KEY_2,
          agentId: runtime1.agent_id,
          conversationId: runtime1.conversation_id,
          autoAck: false,
        });
        await stranger.flush("control");
        const gotHeld = stranger.logs.control.frames.some((frame) => frame.request_id === "external-tool-1");
        return { refused: !gotHeld, evidence: "a session of its own: none of S1's frames" };
      });

      await table.attempt("request_id reuse", "send a command with the request_id S1 is waiting on", async () => {
        owner.send({ type: "sync", runtime: runtime1, request_id: "s1-pending" });
        await listener.logs.control.waitForType("sync", { where: (frame) => frame.request_id === "s1-pending" });
        otherRuntime.send({ type: "sync", runtime: runtime2, request_id: "s1-pending" });
        const refusal = await otherRuntime.waitFor("sync_response", { where: (frame) => frame.request_id === "s1-pending" });
        listener.sendControl({ type: "sync_response", request_id: "s1-pending", success: true, runtime: runtime1 });
        const answer = await owner.waitFor("sync_response", { where: (frame) => frame.request_id === "s1-pending" });
        await otherRuntime.flush("control");
        const diverted =
          otherRuntime.logs.control.ofType("sync_response").filter((frame) => frame.request_id === "s1-pending" && frame.success === true)
            .length > 0;
        return {
          refused: refusal.success === false && answer.success === true && !diverted,
          evidence: "the second claim refused; the answer reached S1",
        };
      });

      const listenerUrl = (query: Record<string, string>) => {
        const url = new URL(listener.answer.wsUrl);
        for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
        return url.toString();
      };
      const controlBefore = listener.control!;
      await table.attempt("listener takeover", "listener socket without deviceId (the tenant's own key)", async () => {
        const outcome = await tryUpgrade(listenerUrl({ connectionName: "x" }), KEY_2);
        if (outcome.kind === "open") outcome.socket.terminate();
        return { refused: outcome.kind !== "open", evidence: describeUpgrade(outcome) };
      });
      await table.attempt("listener takeover", "listener socket with another device's id", async () => {
        const outcome = await tryUpgrade(listenerUrl({ deviceId: "device-other", connectionName: "x" }), KEY_2);
        if (outcome.kind === "open") outcome.socket.terminate();
        return { refused: outcome.kind !== "open", evidence: describeUpgrade(outcome) };
      });

      console.info(table.markdown("Inside one tenant"));
      expect(table.succeeded()).toEqual([]);
      expect(table.rows.length).toBeGreaterThanOrEqual(14);
      // The legitimate holders kept everything: the listener its sockets, S1 its call.
      expect(listener.control).toBe(controlBefore);
      expect(controlBefore.readyState).toBe(WebSocket.OPEN);
      expect(listener.closeCodes).toEqual([]);
      owner.send({
        type: "external_tool_call_response",
        request_id: "external-tool-1",
        result: { content: [{ type: "text", text: "genuine" }] },
      });
      const answers = await listener.logs.control.waitForType("external_tool_call_response");
      expect(answers).toMatchObject({ request_id: "external-tool-1", result: { content: [{ text: "genuine" }] } } satisfies JsonFrame);
      expect(listener.logs.control.ofType("external_tool_call_response")).toHaveLength(1);
      // S1 resumes with its own key and runtime (the control case of the reuse attempts).
      owner.terminate();
      const resumed = await client({ sessionId: "s1", agentId: runtime1.agent_id, conversationId: runtime1.conversation_id });
      expect(resumed.control.readyState).toBe(WebSocket.OPEN);
    });
  });
}
