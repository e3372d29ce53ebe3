/**
 * The two-tenant scenario, run against one relay (security-tenancy.test.ts) or three cluster nodes
 * behind a balancer (security-tenancy-cluster.test.ts): tenant B tries, with its own key, every way
 * to read, write, open, take over or re-register what tenant A owns — A's environment listing, A's
 * status sockets and session, A's listener socket and device, A's outstanding tool call — and every
 * attempt is counted. None may succeed, and afterwards A's listener, session and pending call are
 * exactly as they were (same sockets, no close code, the call still answerable). Prints the table.
 *
 * A {@link TenancyTarget} says where requests go: `relay` is what the clients connect to (the relay,
 * or the balancer in front of the nodes), `origins` every place an attempt is made at — socket
 * upgrades and test hooks are tried at each (one relay: its own origin; a cluster: the balancer
 * and every node, since a hook acts on the node that receives it and an upgrade is checked either
 * where it lands or at the holder it is piped to). An attempt counts as refused only if every
 * origin refused it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { Relay, RelayEnvironmentInfo, RelayOptions, RelayRefusal } from "../../../packages/relay/src/index.js";
import { FakeListener, registerListener } from "../../relay/support/fake-listener.js";
import type { JsonFrame } from "../../relay/support/frame-log.js";
import { httpJson } from "../../relay/support/http-json.js";
import { RawStatusClient } from "../../relay/support/raw-status-client.js";
import { letTimePass } from "../../support/wait.js";
import { AttemptTable, describeUpgrade, tryUpgrade, type AttemptVerdict } from "./attempt-table.js";

const KEY_A = "tenant-a-key-0123456789";
const KEY_B = "tenant-b-key-0123456789";
const runtimeA = { agent_id: "agent-a", conversation_id: "conv-a" };
const runtimeB = { agent_id: "agent-b", conversation_id: "conv-b" };
const tools = [{ tools: [{ name: "secret_tool", description: "A's tool", parameters: { type: "object" } }] }];

/** The relay options of the scenario (a cluster adds its `cluster` part to the same). */
export const TENANCY_RELAY_OPTIONS: RelayOptions = {
  tenants: { "tenant-a": [KEY_A], "tenant-b": [KEY_B] },
  enableTestHooks: true,
  allowQueryToken: true,
  heartbeatIntervalMs: 0,
  unownedCallTimeoutMs: 200,
};

/** What the scenario needs of a relay (a {@link Relay} is one; so is the cluster facade). */
export interface TenancyRelay {
  readonly url: string;
  readonly httpUrl: string;
  statusUrl: Relay["statusUrl"];
  /** The environment as the relay holding it sees it. */
  environment(connectionId: string): RelayEnvironmentInfo | undefined;
  on(event: "refused", listener: (refusal: RelayRefusal) => void): unknown;
}

export interface TenancyTarget {
  relay: TenancyRelay;
  /** HTTP origins every socket upgrade and test hook of tenant B is tried at (each must refuse). */
  origins: readonly string[];
  stop(): Promise<void>;
}

/** `url` with the scheme, host and port of `origin` (an http:// origin becomes ws:// for a ws:// URL). */
function atOrigin(url: string, origin: string): string {
  const moved = new URL(url);
  const to = new URL(origin);
  moved.host = to.host;
  return moved.toString();
}

/** Defines the suite: `start` brings up the relay (or cluster) with {@link TENANCY_RELAY_OPTIONS}. */
export function describeTenancy(title: string, start: (options: RelayOptions) => Promise<TenancyTarget>, setupTimeoutMs = 10_000): void {
  let target: TenancyTarget;
  let relay: TenancyRelay;
  let listenerA: FakeListener;
  let listenerB: FakeListener;
  let sdkA: RawStatusClient;
  let sdkB: RawStatusClient;
  let connectionA: string;
  const table = new AttemptTable();
  const refusals: RelayRefusal[] = [];

  beforeAll(async () => {
    target = await start(TENANCY_RELAY_OPTIONS);
    relay = target.relay;
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
  }, setupTimeoutMs);

  afterAll(async () => {
    for (const client of [sdkA, sdkB]) client?.terminate();
    for (const listener of [listenerA, listenerB]) listener?.terminate();
    await target?.stop();
  });

  const asB = { authorization: `Bearer ${KEY_B}` };

  /** Everything A's SDK session received so far (to prove nothing of B's attempts reached it). */
  function framesOfA(): JsonFrame[] {
    return [...sdkA.logs.control.frames, ...sdkA.logs.stream.frames];
  }

  describe(title, () => {
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
      /** The upgrade at every origin: refused only if no origin left it open. */
      const refusedUpgrade = async (url: string, key = KEY_B): Promise<AttemptVerdict> => {
        const evidence: string[] = [];
        let refused = true;
        for (const origin of target.origins) {
          const outcome = await tryUpgrade(atOrigin(url, origin), key);
          if (outcome.kind === "open") outcome.socket.terminate();
          refused &&= outcome.kind !== "open";
          evidence.push(describeUpgrade(outcome));
        }
        return { refused, evidence: [...new Set(evidence)].join("; ") };
      };
      /** A test hook as tenant B at every origin. */
      const hookEverywhere = async (path: string, body?: unknown) => {
        const answers = [];
        for (const origin of target.origins) answers.push(await httpJson(`${origin}${path}`, { headers: asB, body }));
        return answers;
      };
      const statuses = (answers: Array<{ status: number }>) => `HTTP ${[...new Set(answers.map(({ status }) => status))].join("/")}`;

      // --- reads ---
      await table.attempt("read", "GET /v1/environments lists A's environment", async () => {
        const { status, text } = await httpJson(`${relay.httpUrl}/v1/environments`, { headers: asB });
        return {
          refused: status === 200 && !text.includes(connectionA) && !text.includes("device-a"),
          evidence: `HTTP ${status}, ${JSON.parse(text).connections.length} environment(s), none of A's`,
        };
      });
      await table.attempt("read", "GET /_relay/environments (test hook) lists A's environment", async () => {
        const answers = await hookEverywhere("/_relay/environments");
        return {
          refused: answers.every(({ text }) => !text.includes(connectionA) && !text.includes("device-a")),
          evidence: `${statuses(answers)}, only B's environment`,
        };
      });
      await table.attempt("read", "GET /_relay/stats shows A's usage", async () => {
        const answers = await hookEverywhere("/_relay/stats");
        const onlyB = answers.every(({ json }) => {
          const tenant = (json as { tenant: { tenant: string } }).tenant.tenant;
          return tenant === "tenant-b" && !JSON.stringify(json).includes("tenant-a");
        });
        return { refused: onlyB, evidence: `only tenant-b's counters` };
      });
      await table.attempt("read", "open A's control status socket", () => refusedUpgrade(statusUrl({})));
      await table.attempt("read", "open A's stream status socket naming A's runtime", () =>
        refusedUpgrade(
          relay.statusUrl(connectionA, { channel: "stream", agentId: runtimeA.agent_id, conversationId: runtimeA.conversation_id }),
        ),
      );
      await table.attempt("read", "open A's status socket with B's key as ?token=", () =>
        refusedUpgrade(`${statusUrl({ agentId: runtimeA.agent_id })}&token=${KEY_B}`, ""),
      );
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
        const answers = await hookEverywhere("/_relay/close-listener", { connectionId: connectionA, code: 4000 });
        return {
          refused: answers.every(({ status }) => status === 404) && aControl.readyState === WebSocket.OPEN,
          evidence: statuses(answers),
        };
      });
      await table.attempt("write", "POST /_relay/drop-sdk-sockets on A's environment", async () => {
        const answers = await hookEverywhere("/_relay/drop-sdk-sockets", { connectionId: connectionA });
        return {
          refused: answers.every(({ status }) => status === 404) && sdkA.control.readyState === WebSocket.OPEN,
          evidence: statuses(answers),
        };
      });
      await table.attempt("write", "POST /_relay/drop-sdk-sockets for every environment", async () => {
        const answers = await hookEverywhere("/_relay/drop-sdk-sockets", {});
        const dropped = answers.reduce((sum, { json }) => sum + (json as { dropped: number }).dropped, 0);
        await letTimePass(50); // on purpose: A's sockets would close within this window
        const aOpen = sdkA.control.readyState === WebSocket.OPEN && sdkA.stream.readyState === WebSocket.OPEN;
        return { refused: aOpen, evidence: `dropped ${dropped} socket(s), all B's; A's stay open` };
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
      await table.attempt("takeover", "resume A's SDK session by its sessionId", () =>
        refusedUpgrade(statusUrl({ sessionId: "session-a" })),
      );
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
      // A removes another environment of the same device for good (a second listener instance,
      // 1008). The device stays A's while its first environment lives, so B's registrations of it
      // stay refused — and A's first listener is not replaced.
      const listenerA2 = await FakeListener.start(relay.httpUrl, KEY_A, {
        deviceId: "device-a",
        listenerInstanceId: "instance-a2",
        connectionName: "env-a2",
      });
      try {
        const asA = { authorization: `Bearer ${KEY_A}` };
        const removals = [];
        for (const origin of target.origins) {
          removals.push(
            await httpJson(`${origin}/_relay/close-listener`, {
              headers: asA,
              body: { connectionId: listenerA2.answer.connectionId, code: 1008 },
            }),
          );
        }
        expect(removals.some(({ json }) => (json as { closed?: boolean } | undefined)?.closed === true)).toBe(true);
        await expect
          .poll(async () => (await httpJson(`${relay.httpUrl}/v1/environments`, { headers: asA })).text.includes("env-a2"), {
            timeout: 5_000,
          })
          .toBe(false);
      } finally {
        listenerA2.terminate();
      }
      await table.attempt(
        "re-registration",
        "register A's device as another instance, after A removed another environment of it",
        async () => {
          const { status } = await registerListener(relay.httpUrl, KEY_B, {
            deviceId: "device-a",
            listenerInstanceId: "instance-b3",
            connectionName: "stolen",
          });
          return { refused: status === 409, evidence: `HTTP ${status}` };
        },
      );
      await table.attempt("re-registration", "register A's device and instance, after A removed another environment of it", async () => {
        const { status, json } = await registerListener(relay.httpUrl, KEY_B, {
          deviceId: "device-a",
          listenerInstanceId: "instance-a",
          connectionName: "stolen",
        });
        const stolen = json.connectionId === connectionA ? ", answered with A's connectionId" : "";
        return { refused: status === 409 && aControl.readyState === WebSocket.OPEN, evidence: `HTTP ${status}${stolen}` };
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
}
