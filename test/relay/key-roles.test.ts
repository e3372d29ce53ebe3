/**
 * Key roles (docs/relay.md "Key roles"): inside one tenant, a listener key registers and connects
 * listeners, an SDK key lists environments, opens SDK status sockets and manages sandboxes, and
 * neither may do the other's part — every refusal a 403 with a text that names the role and no
 * key, reported as a `key-role` refusal. A bare list keeps its old meaning (both roles), with a
 * warning at start where it lets one key pose as another's listener. Real sockets on loopback.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startRelay, type Relay, type RelayRefusal } from "../../packages/relay/src/index.js";
import { missingRoleMessage } from "../../packages/relay/src/relay-keys.js";
import { FakeListener, registerListener } from "./support/fake-listener.js";
import { httpJson } from "./support/http-json.js";
import { RawStatusClient } from "./support/raw-status-client.js";
import { recordingLogger } from "./support/relay-fixture.js";
import { letTimePass } from "../support/wait.js";

const LISTENER_KEY = "team-listener-key-0123456789";
const SDK_KEY = "team-sdk-key-0123456789";
const NO_LISTENER_ROLE = "this API key has no listener role: only a listener key may register environments or open listener sockets";
const NO_SDK_ROLE = "this API key has no sdk role: only an SDK key may list environments, open SDK status sockets or manage sandboxes";

const relays: Relay[] = [];
const listeners: FakeListener[] = [];
const clients: RawStatusClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.terminate();
  for (const listener of listeners.splice(0)) listener.terminate();
  for (const relay of relays.splice(0)) await relay.close();
});

/** An upgrade attempt: `opened` (then closed by us), or the refused status and its body. */
function upgrade(url: string, apiKey: string): Promise<{ opened: true } | { status: number; body: string }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${apiKey}` } });
    socket.once("open", () => {
      socket.terminate();
      resolve({ opened: true });
    });
    socket.once("unexpected-response", (_request, response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    socket.on("error", () => {});
  });
}

const refusedWith = (status: number, message: string) => ({ status, body: JSON.stringify({ error: "Forbidden", message }) });

describe("key roles inside one tenant", () => {
  it("an SDK key cannot register or open the listener socket (even with the listed device id); a listener key cannot list, open SDK sockets or manage sandboxes", async () => {
    const logger = recordingLogger();
    const relay = await startRelay({ tenants: { team: { listener: [LISTENER_KEY], sdk: [SDK_KEY] } }, heartbeatIntervalMs: 0, logger });
    relays.push(relay);
    const refusals: RelayRefusal[] = [];
    relay.on("refused", (refusal) => refusals.push(refusal));
    const listener = await FakeListener.start(relay.httpUrl, LISTENER_KEY, { deviceId: "device-team", mode: "single" });
    listeners.push(listener);
    const { connectionId } = listener.answer;

    // Registration: the listener key's alone.
    const byApp = await registerListener(relay.httpUrl, SDK_KEY, { deviceId: "device-team", connectionName: "fake-env" });
    expect(byApp).toEqual({ status: 403, json: { error: "Forbidden", message: NO_LISTENER_ROLE } });
    const byAppNewDevice = await registerListener(relay.httpUrl, SDK_KEY, { deviceId: "device-new", connectionName: "other" });
    expect(byAppNewDevice.status).toBe(403);

    // Listing: the SDK key's alone; it shows the device id (the SDK selects environments by it).
    const listed = await httpJson(`${relay.httpUrl}/v1/environments`, { headers: { authorization: `Bearer ${SDK_KEY}` } });
    expect(listed.status).toBe(200);
    expect((listed.json as { connections: Array<{ deviceId: string }> }).connections.map((entry) => entry.deviceId)).toEqual([
      "device-team",
    ]);
    const listedByListener = await httpJson(`${relay.httpUrl}/v1/environments`, { headers: { authorization: `Bearer ${LISTENER_KEY}` } });
    expect({ status: listedByListener.status, json: listedByListener.json }).toEqual({
      status: 403,
      json: { error: "Forbidden", message: NO_SDK_ROLE },
    });

    // The listener socket with the SDK key and the right device id, in each of its forms: 403 before the upgrade.
    const listenerUrl = `${relay.url}/v1/environments/${connectionId}/listener/ws?deviceId=device-team&connectionName=fake-env`;
    for (const url of [
      listenerUrl,
      `${listenerUrl}&channel=control`,
      `${listenerUrl}&channel=stream&connectionGeneration=g9&connectionAttempt=1`,
    ]) {
      expect(await upgrade(url, SDK_KEY)).toEqual(refusedWith(403, NO_LISTENER_ROLE));
    }
    // The SDK's status socket with the listener key: 403; with the SDK key it opens.
    const statusUrl = `${relay.url}/v1/environments/${connectionId}/status/ws?channel=control`;
    expect(await upgrade(statusUrl, LISTENER_KEY)).toEqual(refusedWith(403, NO_SDK_ROLE));
    const app = await RawStatusClient.connect({ url: relay.url, connectionId, apiKey: SDK_KEY });
    clients.push(app);

    // Sandboxes: the SDK key's (this relay has none: 501 after the role check); a listener key: 403.
    const sandboxByListener = await httpJson(`${relay.httpUrl}/v1/sandboxes`, {
      headers: { authorization: `Bearer ${LISTENER_KEY}` },
      body: { agentId: "agent-1" },
    });
    expect({ status: sandboxByListener.status, json: sandboxByListener.json }).toEqual({
      status: 403,
      json: { error: "Forbidden", message: NO_SDK_ROLE },
    });
    const sandboxByApp = await httpJson(`${relay.httpUrl}/v1/sandboxes`, { headers: { authorization: `Bearer ${SDK_KEY}` }, body: {} });
    expect(sandboxByApp.status).toBe(501);

    // The real listener was never touched: still attached, never closed, and its frames still flow.
    await letTimePass(100);
    expect(listener.closeCodes).toEqual([]);
    expect(relay.environments()).toMatchObject([{ connectionId, deviceId: "device-team", listenerConnected: true }]);
    app.send({ type: "sync", request_id: "sync-1" });
    await listener.logs.control.waitForType("sync");

    expect(refusals.map((refusal) => [refusal.kind, refusal.reason])).toEqual([
      ["key-role", NO_LISTENER_ROLE],
      ["key-role", NO_LISTENER_ROLE],
      ["key-role", NO_SDK_ROLE],
      ["key-role", NO_LISTENER_ROLE],
      ["key-role", NO_LISTENER_ROLE],
      ["key-role", NO_LISTENER_ROLE],
      ["key-role", NO_SDK_ROLE],
      ["key-role", NO_SDK_ROLE],
      ["sandbox-refused", "this relay provisions no sandboxes (start it with a sandbox command: --sandbox-command)"],
    ]);
    expect(refusals.every((refusal) => refusal.tenant === "team")).toBe(true);
    expect(logger.lines.join("\n")).not.toMatch(/team-(listener|sdk)-key/);
  });

  it("a key listed under both roles may do both; the tenant is named in a warning because its other key could pose as the listener", async () => {
    const logger = recordingLogger();
    const relay = await startRelay({
      tenants: { team: { listener: [LISTENER_KEY], sdk: [LISTENER_KEY, SDK_KEY] }, solo: { listener: ["solo-l"], sdk: ["solo-s"] } },
      heartbeatIntervalMs: 0,
      logger,
    });
    relays.push(relay);
    const listener = await FakeListener.start(relay.httpUrl, LISTENER_KEY, { deviceId: "device-both", mode: "single" });
    listeners.push(listener);
    const listed = await httpJson(`${relay.httpUrl}/v1/environments`, { headers: { authorization: `Bearer ${LISTENER_KEY}` } });
    expect(listed.status).toBe(200);
    const warnings = logger.lines.filter((line) => line.includes("keys of both roles"));
    expect(warnings).toEqual([
      'warn relay: tenant team has keys of both roles beside other keys: any of them may act as its listener; give each key one role (docs/relay.md "Key roles") ',
    ]);
  });
});

describe("a bare list of keys: both roles each (what it meant before roles)", () => {
  it("a listener key and an SDK key of one tenant that differ keep working, and the tenant is named in a warning at start", async () => {
    const logger = recordingLogger();
    const relay = await startRelay({
      tenants: { legacy: [LISTENER_KEY, SDK_KEY] },
      apiKeys: ["solo-key-0123"],
      heartbeatIntervalMs: 0,
      logger,
    });
    relays.push(relay);
    const listener = await FakeListener.start(relay.httpUrl, LISTENER_KEY, { deviceId: "device-legacy" });
    listeners.push(listener);
    const app = await RawStatusClient.connect({ url: relay.url, connectionId: listener.answer.connectionId, apiKey: SDK_KEY });
    clients.push(app);
    app.send({ type: "sync", request_id: "sync-legacy" });
    await listener.logs.control.waitForType("sync");
    expect(logger.lines.filter((line) => line.includes("keys of both roles")).map((line) => /tenant (\S+)/.exec(line)?.[1])).toEqual([
      "legacy",
    ]);
    // A key of its own (apiKeys) has both roles: it registers and lists.
    const solo = await FakeListener.start(relay.httpUrl, "solo-key-0123", { deviceId: "device-solo" });
    listeners.push(solo);
    const listed = await httpJson(`${relay.httpUrl}/v1/environments`, { headers: { authorization: "Bearer solo-key-0123" } });
    expect((listed.json as { connections: unknown[] }).connections).toHaveLength(1);
  });
});

describe("docs/relay.md", () => {
  it('quotes the refusal texts and the start-up warning as the code writes them ("Key roles")', () => {
    const page = readFileSync(new URL("../../docs/relay.md", import.meta.url), "utf8");
    expect(missingRoleMessage("listener")).toBe(NO_LISTENER_ROLE);
    expect(missingRoleMessage("sdk")).toBe(NO_SDK_ROLE);
    for (const text of [NO_LISTENER_ROLE, NO_SDK_ROLE]) expect(page).toContain(`\`${text}\``);
    expect(page).toContain(
      '`relay: tenant team-a has keys of both roles beside other keys: any of them may act as its listener; give each key one role (docs/relay.md "Key roles")`',
    );
  });
});
