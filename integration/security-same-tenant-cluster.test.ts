/**
 * Issue 27: the one-tenant scenario (support-security/same-tenant-scenario.ts) across a relay
 * cluster — three nodes sharing one real NATS JetStream server, a round-robin TCP balancer in
 * front. The listener, the owner's session and every attacking session connect through the
 * balancer, so their sockets land on any node and are piped to the node holding the environment;
 * the same assertions as on one relay.
 *
 * Then what only a cluster has: the environment moves (its holder stops, as in a rolling restart;
 * another node takes it over from the shared store). On one relay a `sessionId` stays bound to the
 * key that created it while the session waits for its reconnect; across the move it must stay so
 * too — another key of the tenant may neither claim S1's `sessionId`, nor receive S1's call, nor
 * answer it — and S1 resumes and answers its call once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { FakeListener } from "../test/relay/support/fake-listener.js";
import { RawStatusClient } from "../test/relay/support/raw-status-client.js";
import { letTimePass } from "../test/support/wait.js";
import { AttemptTable, describeUpgrade, tryUpgrade } from "../test/reliability/support-security/attempt-table.js";
import { startClusterRelays, type ClusterRelays } from "./support/cluster-relays.js";
import { describeSameTenant, SAME_TENANT_RELAY_OPTIONS } from "../test/reliability/support-security/same-tenant-scenario.js";

describeSameTenant(
  "one tenant, three cluster nodes behind a balancer",
  async (options) => {
    const cluster = await startClusterRelays(options, { name: "security_same_tenant_cluster" });
    return { relay: cluster, stop: () => cluster.stop() };
  },
  30_000,
);

const KEY_1 = "team-key-one-0123456789";
const KEY_2 = "team-key-two-0123456789";
const runtime1 = { agent_id: "agent-1", conversation_id: "conv-1" };
const tools = [{ tools: [{ name: "owned_tool", description: "S1's tool", parameters: { type: "object" } }] }];

describe("one tenant, across a move of the environment to another node", () => {
  let cluster: ClusterRelays;
  let listener: FakeListener | undefined;
  const clients: RawStatusClient[] = [];
  const table = new AttemptTable();
  beforeAll(async () => {
    cluster = await startClusterRelays(SAME_TENANT_RELAY_OPTIONS, { name: "security_same_tenant_move" });
  }, 30_000);
  afterAll(async () => {
    for (const client of clients) client.terminate();
    listener?.terminate();
    await cluster?.stop();
  });

  it("S1's sessionId, its restored call and the call's answer stay S1's after its environment's holder stops (0 succeed)", async () => {
    listener = await FakeListener.start(cluster.httpUrl, KEY_1, { deviceId: "device-team" });
    const connectionId = listener.answer.connectionId;
    const s1 = {
      url: cluster.url,
      connectionId,
      apiKey: KEY_1,
      sessionId: "s1",
      agentId: runtime1.agent_id,
      conversationId: runtime1.conversation_id,
    };
    const owner = await RawStatusClient.connect(s1);
    clients.push(owner);
    owner.send({ type: "runtime_start", request_id: "start-s1", ...runtime1, external_tools: tools });
    await listener.logs.control.waitForType("runtime_start");
    listener.sendControl({
      type: "external_tool_call_request",
      request_id: "external-tool-1",
      runtime: runtime1,
      tool_call_id: "c1",
      tool_name: "owned_tool",
      input: { private: true },
    });
    await owner.waitFor("external_tool_call_request");

    // The move: the holder stops (its environments let go, 1012) and leaves the balancer; the
    // listener reconnects through the balancer, and the node it reaches takes the environment over.
    const holder = cluster.holder(connectionId)!;
    cluster.proxy.setTargets(cluster.nodes.filter((node) => node !== holder).map((node) => ({ host: "127.0.0.1", port: node.port })));
    await holder.close();
    await listener.connect();
    expect(cluster.environment(connectionId)).toMatchObject({ listenerConnected: true, outstandingCalls: ["external-tool-1"] });

    let thief: RawStatusClient | undefined;
    await table.attempt("sessionId reuse", "S1's sessionId with another key, after the move", async () => {
      const outcome = await tryUpgrade(
        cluster.statusUrl(connectionId, {
          channel: "control",
          sessionId: "s1",
          agentId: runtime1.agent_id,
          conversationId: runtime1.conversation_id,
        }),
        KEY_2,
      );
      if (outcome.kind === "open") outcome.socket.terminate();
      if (outcome.kind === "open") thief = await RawStatusClient.connect({ ...s1, apiKey: KEY_2 });
      if (thief) clients.push(thief);
      return { refused: outcome.kind !== "open", evidence: describeUpgrade(outcome) };
    });
    await table.attempt("forged answer", "receive S1's restored call on another key's session, after the move", async () => {
      await letTimePass(300); // on purpose: the call may not arrive there within this window
      const received =
        thief?.logs.control.ofType("external_tool_call_request").some((frame) => frame.request_id === "external-tool-1") ?? false;
      return { refused: !received, evidence: received ? "delivered to the other key's session, input included" : "not delivered" };
    });
    await table.attempt("forged answer", "answer S1's restored call from another key's session, after the move", async () => {
      thief?.send({
        type: "external_tool_call_response",
        request_id: "external-tool-1",
        result: { content: [{ type: "text", text: "forged" }] },
      });
      if (thief) await thief.flush("control");
      const reached = listener!.logs.control.ofType("external_tool_call_response").length > 0;
      return { refused: !reached, evidence: reached ? "the forged answer reached the listener" : "not forwarded" };
    });

    console.info(table.markdown("Inside one tenant, across a move"));
    expect(table.succeeded()).toEqual([]);
    // S1 resumes with its own key: its call is offered again, and its answer is the one the listener gets.
    owner.terminate();
    const resumed = await RawStatusClient.connect(s1);
    clients.push(resumed);
    expect(resumed.control.readyState).toBe(WebSocket.OPEN);
    await resumed.waitFor("external_tool_call_request", { where: (frame) => frame.request_id === "external-tool-1" });
    resumed.send({
      type: "external_tool_call_response",
      request_id: "external-tool-1",
      result: { content: [{ type: "text", text: "genuine" }] },
    });
    const answer = await listener.logs.control.waitForType("external_tool_call_response");
    expect(answer).toMatchObject({ request_id: "external-tool-1", result: { content: [{ text: "genuine" }] } });
    expect(listener.logs.control.ofType("external_tool_call_response")).toHaveLength(1);
  });
});
