/**
 * Two tenants on one relay: tenant B tries, with its own key, every way to read, write, open,
 * take over or re-register what tenant A owns — A's environment listing, A's status sockets and
 * session, A's listener socket and device, A's outstanding tool call — and every attempt is
 * counted. None may succeed, and afterwards A's listener, session and pending call are exactly
 * as they were (same sockets, no close code, the call still answerable). Prints the table.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startRelay, type Relay, type RelayRefusal } from "../../packages/relay/src/index.js";
import { FakeListener, registerListener } from "../relay/support/fake-listener.js";
import type { JsonFrame } from "../relay/support/frame-log.js";
import { httpJson } from "../relay/support/http-json.js";
import { RawStatusClient } from "../relay/support/raw-status-client.js";
import { letTimePass } from "../support/wait.js";
import { AttemptTable, describeUpgrade, tryUpgrade } from "./support-security/attempt-table.js";

const KEY_A = "tenant-a-key-0123456789";
const KEY_B = "tenant-b-key-0123456789";
const runtimeA = { agent_id: "agent-a", conversation_id: "conv-a" };
const runtimeB = { agent_id: "agent-b", conversation_id: "conv-b" };
const tools = [{ tools: [{ name: "secret_tool", description: "A's tool", parameters: { type: "object" } }] }];

let relay: Relay;
let listenerA: FakeListener;
let listenerB: FakeListener;
let sdkA: RawStatusClient;
let sdkB: RawStatusClient;
let connectionA: string;
const table = new AttemptTable();
const refusals: RelayRefusal[] = [];

beforeAll(async () => {
  relay = await startRelay({
    tenants: { "tenant-a": [KEY_A], "tenant-b": [KEY_B] },
    enableTestHooks: true,
    allowQueryToken: true,
    heartbeatIntervalMs: 0,
    unownedCallTimeoutMs: 200,
  });
  relay.on("refused", (refusal) => refusals.push(refusal));
  listenerA = await FakeListener.start(relay.httpUrl, KEY_A, {
    deviceId: "device-a",
    listenerInstanceId: "instance-a",
    connectionName: "env-a",
  });
  connectionA = listenerA.answer.connectionId;
  sdkA = await RawStatusClient.connect({
    url: relay.url,
    connectionId: connectionA,
    apiKey: KEY_A,
    sessionId: "session-a",
    agentId: runtimeA.agent_id,
    conversationId: runtimeA.conversation_id,
  });
  sdkA.send({ type: "runtime_start", request_id: "start-a", ...runtimeA, external_tools: tools });
  await listenerA.logs.control.waitForType("runtime_start");
  listenerA.sendControl({ type: "runtime_start_response", request_id: "start-a", success: true, runtime: runtimeA });
  await sdkA.waitFor("runtime_start_response");
  listenerA.sendControl({
    type: "external_tool_call_request",
    request_id: "external-tool-a1",
    runtime: runtimeA,
    tool_call_id: "call-a1",
    tool_name: "secret_tool",
    input: { secret: "A's input" },
  });
  await sdkA.waitFor("external_tool_call_request");
  listenerB = await FakeListener.start(relay.httpUrl, KEY_B, {
    deviceId: "device-b",
    listenerInstanceId: "instance-b",
    connectionName: "env-b",
  });
  sdkB = await RawStatusClient.connect({
    url: relay.url,
    connectionId: listenerB.answer.connectionId,
    apiKey: KEY_B,
    sessionId: "session-b",
    agentId: runtimeB.agent_id,
    conversationId: runtimeB.conversation_id,
  });
});

afterAll(async () => {
  for (const client of [sdkA, sdkB]) client?.terminate();
  for (const listener of [listenerA, listenerB]) listener?.terminate();
  await relay?.close();
});

const asB = { authorization: `Bearer ${KEY_B}` };

/** Everything A's SDK session received so far (to prove nothing of B's attempts reached it). */
function framesOfA(): JsonFrame[] {
  return [...sdkA.logs.control.frames, ...sdkA.logs.stream.frames];
}

describe("two tenants", () => {
  it("every cross-tenant read, write, socket open, takeover and re-registration by tenant B is refused (0 succeed), and A is untouched", async () => {
    const aControl = listenerA.control!;
    const aStream = listenerA.stream!;
    const aSeenBefore = framesOfA().length;
    const statusUrl = (query: Record<string, string>) => relay.statusUrl(connectionA, { channel: "control", ...query });
    const listenerUrl = (query: Record<string, string>) => {
      const url = new URL(listenerA.answer.wsUrl);
      for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
      return url.toString();
    };
    const refusedUpgrade = async (url: string, key = KEY_B) => {
      const outcome = await tryUpgrade(url, key);
      if (outcome.kind === "open") outcome.socket.terminate();
      return { refused: outcome.kind !== "open", evidence: describeUpgrade(outcome) };
    };

    // --- reads ---
    await table.attempt("read", "GET /v1/environments lists A's environment", async () => {
      const { status, text } = await httpJson(`${relay.httpUrl}/v1/environments`, { headers: asB });
      return {
        refused: status === 200 && !text.includes(connectionA) && !text.includes("device-a"),
        evidence: `HTTP ${status}, ${JSON.parse(text).connections.length} environment(s), none of A's`,
      };
    });
    await table.attempt("read", "GET /_relay/environments (test hook) lists A's environment", async () => {
      const { status, text } = await httpJson(`${relay.httpUrl}/_relay/environments`, { headers: asB });
      return { refused: !text.includes(connectionA) && !text.includes("device-a"), evidence: `HTTP ${status}, only B's environment` };
    });
    await table.attempt("read", "GET /_relay/stats shows A's usage", async () => {
      const { json } = await httpJson(`${relay.httpUrl}/_relay/stats`, { headers: asB });
      const tenant = (json as { tenant: { tenant: string } }).tenant.tenant;
      return { refused: tenant === "tenant-b" && !JSON.stringify(json).includes("tenant-a"), evidence: `only tenant-b's counters` };
    });
    await table.attempt("read", "open A's control status socket", () => refusedUpgrade(statusUrl({})));
    await table.attempt("read", "open A's stream status socket naming A's runtime", () =>
      refusedUpgrade(
        relay.statusUrl(connectionA, { channel: "stream", agentId: runtimeA.agent_id, conversationId: runtimeA.conversation_id }),
      ),
    );
    await table.attempt("read", "open A's status socket with B's key as ?token=", async () => {
      const outcome = await tryUpgrade(`${statusUrl({ agentId: runtimeA.agent_id })}&token=${KEY_B}`, "");
      if (outcome.kind === "open") outcome.socket.terminate();
      return { refused: outcome.kind !== "open", evidence: describeUpgrade(outcome) };
    });
    await table.attempt("read", "name A's runtime in a sync on B's own session", async () => {
      sdkB.send({ type: "sync", runtime: runtimeA, request_id: "b-reads-a" });
      const answer = await sdkB.waitFor("sync_response", { where: (frame) => frame.request_id === "b-reads-a" });
      return { refused: answer.success === false, evidence: `sync_response success:false "${String(answer.error)}"` };
    });
    await table.attempt("read", "B's listener emits a frame of A's runtime", async () => {
      listenerB.sendStream({
        type: "stream_delta",
        runtime: runtimeA,
        event_seq: 1,
        delta: { message_type: "assistant_message", content: "from B" },
      });
      listenerB.sendControl({
        type: "external_tool_call_request",
        request_id: "external-tool-b-as-a",
        runtime: runtimeA,
        tool_call_id: "x",
        tool_name: "secret_tool",
        input: {},
      });
      await letTimePass(250); // on purpose: nothing of it may arrive within this window
      const leaked = framesOfA()
        .slice(aSeenBefore)
        .some((frame) => JSON.stringify(frame).includes("from B") || frame.request_id === "external-tool-b-as-a");
      return { refused: !leaked, evidence: "A's session received none of it (B's environment has no session of that runtime)" };
    });

    // --- writes ---
    await table.attempt("write", "POST /_relay/close-listener on A's environment", async () => {
      const { status } = await httpJson(`${relay.httpUrl}/_relay/close-listener`, {
        headers: asB,
        body: { connectionId: connectionA, code: 4000 },
      });
      return { refused: status === 404 && aControl.readyState === WebSocket.OPEN, evidence: `HTTP ${status}` };
    });
    await table.attempt("write", "POST /_relay/drop-sdk-sockets on A's environment", async () => {
      const { status } = await httpJson(`${relay.httpUrl}/_relay/drop-sdk-sockets`, { headers: asB, body: { connectionId: connectionA } });
      return { refused: status === 404 && sdkA.control.readyState === WebSocket.OPEN, evidence: `HTTP ${status}` };
    });
    await table.attempt("write", "POST /_relay/drop-sdk-sockets for every environment", async () => {
      const { json } = await httpJson(`${relay.httpUrl}/_relay/drop-sdk-sockets`, { headers: asB, body: {} });
      await letTimePass(50); // on purpose: A's sockets would close within this window
      const aOpen = sdkA.control.readyState === WebSocket.OPEN && sdkA.stream.readyState === WebSocket.OPEN;
      return { refused: aOpen, evidence: `dropped ${(json as { dropped: number }).dropped} socket(s), all B's; A's stay open` };
    });
    sdkB = await RawStatusClient.connect({
      url: relay.url,
      connectionId: listenerB.answer.connectionId,
      apiKey: KEY_B,
      sessionId: "session-b",
      agentId: runtimeB.agent_id,
      conversationId: runtimeB.conversation_id,
    });
    await table.attempt("write", "answer A's outstanding tool call from B's session", async () => {
      const before = listenerA.logs.control.ofType("external_tool_call_response").length;
      sdkB.send({
        type: "external_tool_call_response",
        request_id: "external-tool-a1",
        result: { content: [{ type: "text", text: "forged by B" }] },
      });
      await sdkB.flush("control");
      const reached = listenerA.logs.control.ofType("external_tool_call_response").length > before;
      return {
        refused: !reached && relay.environment(connectionA)!.outstandingCalls.includes("external-tool-a1"),
        evidence: "not forwarded; A's call still outstanding",
      };
    });
    await table.attempt("write", "send a runtime_start for A's runtime from B's session", async () => {
      sdkB.send({ type: "runtime_start", request_id: "b-starts-a", ...runtimeA });
      const answer = await sdkB.waitFor("runtime_start_response", { where: (frame) => frame.request_id === "b-starts-a" });
      const reached = listenerA.logs.control.frames.some((frame) => frame.request_id === "b-starts-a");
      return {
        refused: answer.success === false && !reached,
        evidence: `runtime_start_response success:false; nothing reached A's listener`,
      };
    });

    // --- takeovers ---
    await table.attempt("takeover", "resume A's SDK session by its sessionId", () => refusedUpgrade(statusUrl({ sessionId: "session-a" })));
    await table.attempt("takeover", "A's listener socket with A's deviceId", () =>
      refusedUpgrade(listenerUrl({ deviceId: "device-a", connectionName: "x" })),
    );
    await table.attempt("takeover", "A's listener socket without deviceId", () => refusedUpgrade(listenerUrl({ connectionName: "x" })));
    await table.attempt("takeover", "A's paired listener control socket (new generation)", () =>
      refusedUpgrade(listenerUrl({ deviceId: "device-a", channel: "control", connectionGeneration: "g-b", connectionAttempt: "1" })),
    );
    await table.attempt("takeover", "A's listener stream socket", () =>
      refusedUpgrade(listenerUrl({ deviceId: "device-a", channel: "stream" })),
    );

    // --- re-registration ---
    await table.attempt("re-registration", "register A's device and instance", async () => {
      const { status, json } = await registerListener(relay.httpUrl, KEY_B, {
        deviceId: "device-a",
        listenerInstanceId: "instance-a",
        connectionName: "stolen",
      });
      return { refused: status === 409, evidence: `HTTP ${status} "${String(json.message)}"` };
    });
    await table.attempt("re-registration", "register A's device as another instance", async () => {
      const { status } = await registerListener(relay.httpUrl, KEY_B, {
        deviceId: "device-a",
        listenerInstanceId: "instance-b2",
        connectionName: "stolen",
      });
      return { refused: status === 409, evidence: `HTTP ${status}` };
    });

    console.info(table.markdown("Tenant B against tenant A"));
    // Control cases: the same requests with A's key do reach A's things, so "refused" above means refused.
    const own = await tryUpgrade(relay.statusUrl(connectionA, { channel: "control", sessionId: "control-case" }), KEY_A);
    expect(own.kind).toBe("open");
    if (own.kind === "open") own.socket.terminate();
    expect((await httpJson(`${relay.httpUrl}/v1/environments`, { headers: { authorization: `Bearer ${KEY_A}` } })).text).toContain(
      connectionA,
    );
    expect(table.succeeded()).toEqual([]);
    expect(table.rows.length).toBeGreaterThanOrEqual(20);
    expect(refusals.filter((refusal) => refusal.tenant === "tenant-b").length).toBeGreaterThanOrEqual(10);

    // A is untouched: the same listener sockets, never closed; its session open; its call answerable.
    expect(listenerA.control).toBe(aControl);
    expect(listenerA.stream).toBe(aStream);
    expect([aControl.readyState, aStream.readyState]).toEqual([WebSocket.OPEN, WebSocket.OPEN]);
    expect(listenerA.closeCodes).toEqual([]);
    expect(relay.environment(connectionA)).toMatchObject({
      tenant: "tenant-a",
      listenerConnected: true,
      outstandingCalls: ["external-tool-a1"],
    });
    sdkA.send({
      type: "external_tool_call_response",
      request_id: "external-tool-a1",
      result: { content: [{ type: "text", text: "A's answer" }] },
    });
    const answer = await listenerA.logs.control.waitForType("external_tool_call_response");
    expect(answer).toMatchObject({ request_id: "external-tool-a1", result: { content: [{ text: "A's answer" }] } });
    expect(listenerA.logs.control.ofType("external_tool_call_response")).toHaveLength(1);
  });
});
