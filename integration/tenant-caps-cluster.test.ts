/**
 * Issue 27: tenant caps hold across a relay cluster (docs/relay-cluster.md "Tenant caps"). Three
 * nodes share one real NATS JetStream server behind a round-robin balancer, with the same caps on
 * every node; tenant A's environments are held by different nodes, so no node holds all of what A
 * uses. At the cap, the next session / environment / tool call of A is refused whichever node it
 * reaches (each node's own URL is tried in turn); freeing one unit lets the next one in within 2 s
 * (a node counts what the others published); tenant B is never affected.
 *
 * Before an over-the-cap attempt the test waits until every node counts the tenant's full usage:
 * a node reads the others' counts as they arrive (one publish round trip), so an attempt made in
 * the same millisecond as the unit it competes with may pass — that documented bound is not what
 * these tests measure.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Relay, RelayOptions, TenantUsage } from "../packages/relay/src/index.js";
import { startNatsServers, type NatsServers } from "./support/nats-servers.js";
import { FakeListener, registerListener } from "../test/relay/support/fake-listener.js";
import { httpJson } from "../test/relay/support/http-json.js";
import { RawStatusClient } from "../test/relay/support/raw-status-client.js";
import { until } from "../test/support/wait.js";
import { tryUpgrade } from "../test/reliability/support-security/attempt-table.js";
import { startClusterRelays, type ClusterRelays } from "./support/cluster-relays.js";

const KEY_A = "caps-tenant-a-key-0123456789";
const KEY_B = "caps-tenant-b-key-0123456789";
const TENANTS = { "tenant-a": [KEY_A], "tenant-b": [KEY_B] };
/** How long a freed unit may take to count as free on every node. */
const FREED_WITHIN_MS = 2_000;

let nats: NatsServers;
beforeAll(async () => {
  nats = await startNatsServers({ count: 1 });
}, 30_000);
afterAll(async () => {
  await nats?.stop();
});

/** What `node` counts for `tenant` (its own units plus what the other nodes published). */
function usageOf(node: Relay, tenant: string): TenantUsage {
  const usage = node.stats().tenants.find((entry) => entry.tenant === tenant);
  if (!usage) throw new Error(`no tenant ${tenant}`);
  return usage;
}

/** Waits until every node counts `count` of `field` for `tenant`. */
function everyNodeCounts(
  cluster: ClusterRelays,
  tenant: string,
  field: keyof Omit<TenantUsage, "tenant">,
  count: number,
  timeoutMs = 5_000,
) {
  const seen = () => cluster.nodes.map((node) => usageOf(node, tenant)[field]).join(", ");
  return until(
    () => cluster.nodes.every((node) => usageOf(node, tenant)[field] === count),
    () => `every node to count ${count} ${field} of ${tenant} (they count: ${seen()})`,
    timeoutMs,
  );
}

/** One listener per node, each registered and connected at that node's own URL: node i holds environment i. */
async function environmentPerNode(cluster: ClusterRelays, key: string, prefix: string): Promise<FakeListener[]> {
  const listeners: FakeListener[] = [];
  for (const [index, node] of cluster.nodes.entries()) {
    const listener = await FakeListener.start(node.httpUrl, key, {
      deviceId: `${prefix}-${index + 1}`,
      connectionName: `${prefix}-${index + 1}`,
    });
    listeners.push(listener);
    expect(cluster.holder(listener.answer.connectionId)).toBe(node);
  }
  return listeners;
}

describe("maxSessionsPerTenant across three nodes", () => {
  let cluster: ClusterRelays;
  const clients: RawStatusClient[] = [];
  const listeners: FakeListener[] = [];
  beforeAll(async () => {
    cluster = await startClusterRelays(
      { tenants: TENANTS, heartbeatIntervalMs: 0, maxSessionsPerTenant: 4, sdkResumeWindowMs: 200 } satisfies RelayOptions,
      { name: "caps_sessions", nats },
    );
  }, 30_000);
  afterAll(async () => {
    for (const client of clients) client.terminate();
    for (const listener of listeners) listener.terminate();
    await cluster?.stop();
  });

  const open = async (connectionId: string, apiKey: string, sessionId: string) => {
    const client = await RawStatusClient.connect({ url: cluster.url, connectionId, apiKey, sessionId });
    clients.push(client);
    return client;
  };
  /** The 5th session of A opened at each node's own URL, naming each of A's environments: every attempt's HTTP status. */
  const fifthEverywhere = async (environments: string[], label: string) => {
    const statuses: Record<string, number | "open"> = {};
    for (const [nodeIndex, node] of cluster.nodes.entries()) {
      for (const [environmentIndex, connectionId] of environments.entries()) {
        const url = node.statusUrl(connectionId, { channel: "control", sessionId: `${label}-n${nodeIndex + 1}-e${environmentIndex + 1}` });
        const outcome = await tryUpgrade(url, KEY_A);
        if (outcome.kind === "open") outcome.socket.terminate();
        statuses[`via n${nodeIndex + 1}, environment held by n${environmentIndex + 1}`] =
          outcome.kind === "refused" ? outcome.status : outcome.kind === "open" ? "open" : -outcome.code;
      }
    }
    return statuses;
  };

  it("4 sessions of A are accepted, the 5th is refused 429 at every node; closing one frees a slot within 2 s; B is unaffected", async () => {
    listeners.push(...(await environmentPerNode(cluster, KEY_A, "caps-a")));
    const environments = listeners.map((listener) => listener.answer.connectionId);
    // Spread over the nodes: 2 sessions on n1's environment, one each on n2's and n3's, all through the balancer.
    const sessions = [
      await open(environments[0]!, KEY_A, "a-1"),
      await open(environments[0]!, KEY_A, "a-2"),
      await open(environments[1]!, KEY_A, "a-3"),
      await open(environments[2]!, KEY_A, "a-4"),
    ];
    expect(cluster.nodes.map((node) => node.environments().reduce((sum, environment) => sum + environment.sdkSessions, 0))).toEqual([
      2, 1, 1,
    ]);
    await everyNodeCounts(cluster, "tenant-a", "sessions", 4);

    const full = await fifthEverywhere(environments, "fifth");
    console.info("[caps] the 5th session of A:", full);
    expect(Object.values(full)).toEqual(Array(9).fill(429));

    // Tenant B, at the same time, opens its own 4 sessions.
    const listenerB = await FakeListener.start(cluster.httpUrl, KEY_B, { deviceId: "caps-b-1", connectionName: "caps-b-1" });
    listeners.push(listenerB);
    for (const index of [1, 2, 3, 4]) await open(listenerB.answer.connectionId, KEY_B, `b-${index}`);
    expect(usageOf(cluster.holder(listenerB.answer.connectionId)!, "tenant-b").sessions).toBe(4);

    // A closes its session on n1's environment: within 2 s every node counts 3, and a new one is accepted elsewhere.
    await sessions[0]!.close();
    await everyNodeCounts(cluster, "tenant-a", "sessions", 3, FREED_WITHIN_MS);
    const replacement = await open(environments[2]!, KEY_A, "a-5");
    expect(replacement.control.readyState).toBe(replacement.control.OPEN);
    await everyNodeCounts(cluster, "tenant-a", "sessions", 4);
    const fullAgain = await fifthEverywhere(environments, "sixth");
    expect(Object.values(fullAgain)).toEqual(Array(9).fill(429));
  });
});

describe("maxEnvironmentsPerTenant across three nodes", () => {
  let cluster: ClusterRelays;
  const listeners: FakeListener[] = [];
  beforeAll(async () => {
    cluster = await startClusterRelays(
      { tenants: TENANTS, heartbeatIntervalMs: 0, maxEnvironmentsPerTenant: 2, enableTestHooks: true } satisfies RelayOptions,
      { name: "caps_environments", nats },
    );
  }, 30_000);
  afterAll(async () => {
    for (const listener of listeners) listener.terminate();
    await cluster?.stop();
  });

  /** A registration of a new device of A at each node's own URL: every status. */
  const registerEverywhere = async (deviceId: string) => {
    const statuses: number[] = [];
    for (const node of cluster.nodes)
      statuses.push((await registerListener(node.httpUrl, KEY_A, { deviceId, connectionName: deviceId })).status);
    return statuses;
  };

  it("2 environments of A are registered, a 3rd is refused 429 at every node; removing one frees a slot within 2 s; B is unaffected", async () => {
    // A's two environments, registered and connected at n1 and n2: each held by another node.
    for (const node of cluster.nodes.slice(0, 2)) {
      const listener = await FakeListener.start(node.httpUrl, KEY_A, { deviceId: `env-a-${node.port}`, connectionName: "env-a" });
      listeners.push(listener);
      expect(cluster.holder(listener.answer.connectionId)).toBe(node);
    }
    expect(await registerEverywhere("env-a-third")).toEqual([429, 429, 429]);
    expect((await registerListener(cluster.httpUrl, KEY_A, { deviceId: "env-a-third", connectionName: "x" })).status).toBe(429);

    // Tenant B registers its own two.
    for (const index of [1, 2]) {
      const listener = await FakeListener.start(cluster.httpUrl, KEY_B, { deviceId: `env-b-${index}`, connectionName: "env-b" });
      listeners.push(listener);
    }

    // A removes its first environment for good (1008, at its holder: a test hook acts on the node that receives it).
    const removed = listeners[0]!.answer.connectionId;
    const { json } = await httpJson(`${cluster.holder(removed)!.httpUrl}/_relay/close-listener`, {
      headers: { authorization: `Bearer ${KEY_A}` },
      body: { connectionId: removed, code: 1008 },
    });
    expect(json).toEqual({ closed: true });
    // Registered at n3, which never held either environment: accepted within 2 s.
    await expect
      .poll(
        async () => (await registerListener(cluster.nodes[2]!.httpUrl, KEY_A, { deviceId: "env-a-third", connectionName: "x" })).status,
        {
          timeout: FREED_WITHIN_MS,
        },
      )
      .toBe(200);
    expect(await registerEverywhere("env-a-fourth")).toEqual([429, 429, 429]);
    const listingB = await httpJson(`${cluster.httpUrl}/v1/environments`, { headers: { authorization: `Bearer ${KEY_B}` } });
    expect(
      (listingB.json as { connections: Array<{ connectionId: string | null }> }).connections.map((entry) => entry.connectionId),
    ).toEqual(expect.arrayContaining(listeners.slice(2).map((listener) => listener.answer.connectionId)));
  });
});

describe("maxOutstandingCallsPerTenant across three nodes", () => {
  let cluster: ClusterRelays;
  const clients: RawStatusClient[] = [];
  const listeners: FakeListener[] = [];
  beforeAll(async () => {
    cluster = await startClusterRelays(
      { tenants: TENANTS, heartbeatIntervalMs: 0, maxOutstandingCallsPerTenant: 2 } satisfies RelayOptions,
      { name: "caps_calls", nats },
    );
  }, 30_000);
  afterAll(async () => {
    for (const client of clients) client.terminate();
    for (const listener of listeners) listener.terminate();
    await cluster?.stop();
  });

  const runtimeOf = (index: number) => ({ agent_id: "agent-caps", conversation_id: `conv-${index}` });
  /** A session through the balancer, bound to `runtime` by its URL (so it owns the runtime's calls). */
  const sessionFor = async (connectionId: string, apiKey: string, runtime: { agent_id: string; conversation_id: string }) => {
    const client = await RawStatusClient.connect({
      url: cluster.url,
      connectionId,
      apiKey,
      sessionId: `${connectionId}-${runtime.conversation_id}`,
      agentId: runtime.agent_id,
      conversationId: runtime.conversation_id,
    });
    clients.push(client);
    return client;
  };
  const call = (listener: FakeListener, runtime: { agent_id: string; conversation_id: string }, requestId: string) =>
    listener.sendControl({
      type: "external_tool_call_request",
      request_id: requestId,
      runtime,
      tool_call_id: `tool-${requestId}`,
      tool_name: "capped_tool",
      input: {},
    });
  const relayError = (listener: FakeListener, requestId: string) =>
    listener.logs.control.waitForType("external_tool_call_response", { where: (frame) => frame.request_id === requestId });

  it("2 outstanding calls of A are delivered, every further call is answered with the relay's error at every node; answering one frees a slot within 2 s; B is unaffected", async () => {
    listeners.push(...(await environmentPerNode(cluster, KEY_A, "calls-a")));
    const sessions = [];
    for (const [index, listener] of listeners.entries())
      sessions.push(await sessionFor(listener.answer.connectionId, KEY_A, runtimeOf(index)));
    const [listener1, listener2, listener3] = listeners as [FakeListener, FakeListener, FakeListener];
    const [session1, session2, session3] = sessions as [RawStatusClient, RawStatusClient, RawStatusClient];

    call(listener1, runtimeOf(0), "a-call-1");
    call(listener2, runtimeOf(1), "a-call-2");
    await session1.waitFor("external_tool_call_request", { where: (frame) => frame.request_id === "a-call-1" });
    await session2.waitFor("external_tool_call_request", { where: (frame) => frame.request_id === "a-call-2" });
    await everyNodeCounts(cluster, "tenant-a", "outstandingCalls", 2);

    // Over the cap, at each node (n1 and n2 hold one call each, n3 none): the relay answers the listener itself.
    const over = [
      [listener1, runtimeOf(0), "a-over-n1"],
      [listener2, runtimeOf(1), "a-over-n2"],
      [listener3, runtimeOf(2), "a-over-n3"],
    ] as const;
    for (const [listener, runtime, requestId] of over) {
      call(listener, runtime, requestId);
      const answer = await relayError(listener, requestId);
      expect(answer.error).toMatch(/^relay: the tenant already has 2 unanswered tool calls \(maxOutstandingCallsPerTenant\)/);
    }
    const delivered = sessions.flatMap((session) =>
      session.logs.control.ofType("external_tool_call_request").map((frame) => frame.request_id),
    );
    expect(delivered).toEqual(["a-call-1", "a-call-2"]);

    // Tenant B, at the same time: its own two calls are delivered.
    const listenerB = await FakeListener.start(cluster.httpUrl, KEY_B, { deviceId: "calls-b-1", connectionName: "calls-b" });
    listeners.push(listenerB);
    const sessionB = await sessionFor(listenerB.answer.connectionId, KEY_B, runtimeOf(9));
    call(listenerB, runtimeOf(9), "b-call-1");
    call(listenerB, runtimeOf(9), "b-call-2");
    await sessionB.waitFor("external_tool_call_request", { where: (frame) => frame.request_id === "b-call-2" });
    expect(sessionB.logs.control.ofType("external_tool_call_request").map((frame) => frame.request_id)).toEqual(["b-call-1", "b-call-2"]);
    expect(listenerB.logs.control.ofType("external_tool_call_response")).toEqual([]);

    // A answers its call on n1: within 2 s every node counts 1, and a call on n3 is delivered.
    session1.send({ type: "external_tool_call_response", request_id: "a-call-1", result: { content: [{ type: "text", text: "done" }] } });
    const answered = await relayError(listener1, "a-call-1");
    expect(answered.result).toEqual({ content: [{ type: "text", text: "done" }] });
    await everyNodeCounts(cluster, "tenant-a", "outstandingCalls", 1, FREED_WITHIN_MS);
    call(listener3, runtimeOf(2), "a-call-3");
    await session3.waitFor("external_tool_call_request", { where: (frame) => frame.request_id === "a-call-3" });
    expect(listener3.logs.control.ofType("external_tool_call_response").map((frame) => frame.request_id)).toEqual(["a-over-n3"]);
    await everyNodeCounts(cluster, "tenant-a", "outstandingCalls", 2);
    call(listener1, runtimeOf(0), "a-over-again");
    expect((await relayError(listener1, "a-over-again")).error).toMatch(/maxOutstandingCallsPerTenant/);
    expect(session1.logs.control.ofType("external_tool_call_request").map((frame) => frame.request_id)).toEqual(["a-call-1"]);
  });
});
