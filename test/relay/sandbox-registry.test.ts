/**
 * The relay's sandboxes with a real process per sandbox (a probe program, see
 * support/sandbox-probe.ts): the routes and their refusals, create-or-resume, the TTL, terminate,
 * a process that exits, shutdown, the environment a sandbox gets, what it can see of the
 * filesystem, and the tenancy rules (another tenant's sandbox is a 404, a sandbox's key opens
 * nothing but its own listener).
 */
import { existsSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startRelay, type Relay, type RelaySandboxInfo, type RelayOptions } from "../../packages/relay/src/index.js";
import { createSandboxProbe, probeReport, type SandboxProbe } from "./support/sandbox-probe.js";
import { httpJson } from "./support/http-json.js";

const KEY_A = "tenant-a-key-0001";
const KEY_A2 = "tenant-a-key-0002";
const KEY_B = "tenant-b-key-0001";
const commit = "89abcdef0123456789abcdef0123456789abcdef";

let probe: SandboxProbe;
const relays: Relay[] = [];

beforeAll(() => {
  probe = createSandboxProbe();
});
afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.close()));
});
afterAll(() => probe.remove());

async function relayWith(options: Partial<RelayOptions> = {}, sandbox: Parameters<SandboxProbe["options"]>[0] = {}): Promise<Relay> {
  const relay = await startRelay({
    tenants: { a: [KEY_A, KEY_A2], b: [KEY_B] },
    enableTestHooks: true,
    sandbox: probe.options(sandbox),
    ...options,
  });
  relays.push(relay);
  return relay;
}

const api = (relay: Relay, key: string) => (method: string, path: string, body?: unknown) =>
  httpJson(`${relay.httpUrl}${path}`, { method, headers: { authorization: `Bearer ${key}` }, body });

async function sandboxOutput(relay: Relay, key: string, sandboxId: string): Promise<string[]> {
  const listed = (await api(relay, key)("GET", "/_relay/sandboxes")).json as Array<RelaySandboxInfo & { output: string[] }>;
  return listed.find((entry) => entry.sandboxId === sandboxId)?.output ?? [];
}

async function report(relay: Relay, key: string, sandboxId: string) {
  await expect.poll(async () => probeReport(await sandboxOutput(relay, key, sandboxId)) !== undefined, { timeout: 10_000 }).toBe(true);
  return probeReport(await sandboxOutput(relay, key, sandboxId))!;
}

describe("sandbox routes", () => {
  it("a relay without sandboxes answers 501 on every sandbox route", async () => {
    const relay = await startRelay({ apiKeys: [KEY_A] });
    relays.push(relay);
    const call = api(relay, KEY_A);
    for (const [method, path] of [
      ["POST", "/v1/sandboxes"],
      ["POST", "/v1/agents/a-1/sandboxes"],
      ["POST", "/v1/sandboxes/s/refresh"],
      ["POST", "/v1/sandboxes/s/terminate"],
      ["DELETE", "/v1/agents/a-1/sandboxes"],
    ] as const) {
      const answer = await call(method, path, method === "POST" ? {} : undefined);
      expect(answer.status).toBe(501);
      expect(answer.text).toContain("--sandbox-command");
    }
  });

  it.each([
    ["a short commit", { githubRepositories: [{ owner: "letta-ai", repo: "letta-code", commit: "abc123" }] }, "40-hex"],
    ["an owner with a slash", { githubRepositories: [{ owner: "a/b", repo: "r", commit }] }, "githubRepositories"],
    [
      "eleven repositories",
      { githubRepositories: Array.from({ length: 11 }, (_, index) => ({ owner: "o", repo: `r${index}`, commit })) },
      "at most 10",
    ],
    ["an unknown sandbox class", { sandboxClass: "gpu" }, "sandboxClass"],
    ["a conversation without an agent", { conversationId: "conv-1" }, "needs agentId"],
    ["an empty agent id", { agentId: "" }, "agentId"],
  ])("create refuses %s with 400", async (_name, body, message) => {
    const relay = await relayWith();
    const answer = await api(relay, KEY_A)("POST", "/v1/sandboxes", body);
    expect(answer.status).toBe(400);
    expect(answer.text).toContain(message);
    expect(relay.sandboxes()).toEqual([]);
  });

  it("create answers the sandbox; the same agent and conversation resume it; an agent-less create is always new", async () => {
    const relay = await relayWith();
    const call = api(relay, KEY_A);
    const repositories = [{ owner: "letta-ai", repo: "letta-code", commit }];
    const first = await call("POST", "/v1/agents/agent-1/sandboxes", {
      conversationId: "conv-1",
      githubRepositories: repositories,
      sandboxClass: "container",
    });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({
      sandboxId: expect.stringMatching(/^sandbox-/),
      deviceId: expect.stringMatching(/^sandbox-device-/),
      connectionName: expect.any(String),
      agentId: "agent-1",
      conversationId: "conv-1",
      resumed: false,
    });
    const again = await call("POST", "/v1/sandboxes", { agentId: "agent-1", conversationId: "conv-1" });
    expect(again.json).toMatchObject({ sandboxId: (first.json as { sandboxId: string }).sandboxId, resumed: true });
    const otherConversation = await call("POST", "/v1/agents/agent-1/sandboxes", { conversationId: "conv-2" });
    const agentLess = [await call("POST", "/v1/sandboxes", {}), await call("POST", "/v1/sandboxes", {})];
    const ids = new Set([first, otherConversation, ...agentLess].map((answer) => (answer.json as { sandboxId: string }).sandboxId));
    expect(ids.size).toBe(4);
    expect(relay.sandboxes()).toHaveLength(4);
    expect(relay.sandboxes().find((entry) => entry.conversationId === "conv-1")).toMatchObject({
      sandboxClass: "container",
      githubRepositories: repositories,
    });
    expect(relay.stats().tenants.find((entry) => entry.tenant === "a")).toMatchObject({ sandboxes: 4 });
  });

  it("refresh takes 1-60 whole minutes and moves the expiry; an unknown sandbox is a 404", async () => {
    const relay = await relayWith();
    const call = api(relay, KEY_A);
    const { sandboxId } = (await call("POST", "/v1/sandboxes", {})).json as { sandboxId: string };
    for (const ttlMinutes of [0, 61, 1.5, "5"])
      expect((await call("POST", `/v1/sandboxes/${sandboxId}/refresh`, { ttlMinutes })).status).toBe(400);
    const refreshed = await call("POST", `/v1/sandboxes/${sandboxId}/refresh`, { ttlMinutes: 60 });
    expect(refreshed.json).toMatchObject({ success: true, sandboxId });
    expect(Date.parse((refreshed.json as { expiresAt: string }).expiresAt) - Date.now()).toBeGreaterThan(59 * 60_000);
    expect((await call("POST", "/v1/sandboxes/sandbox-nope/refresh", { ttlMinutes: 5 })).status).toBe(404);
    expect((await call("POST", "/v1/sandboxes/sandbox-nope/terminate", {})).status).toBe(404);
  });

  it("agent-scoped refresh and DELETE reach the agent's sandbox", async () => {
    const relay = await relayWith();
    const call = api(relay, KEY_A);
    const { sandboxId } = (await call("POST", "/v1/agents/agent-9/sandboxes", {})).json as { sandboxId: string };
    expect((await call("POST", "/v1/agents/agent-9/sandboxes/refresh", { ttlMinutes: 2 })).json).toMatchObject({
      success: true,
      sandboxId,
    });
    expect((await call("POST", "/v1/agents/agent-8/sandboxes/refresh", {})).status).toBe(404);
    expect((await call("DELETE", "/v1/agents/agent-9/sandboxes")).json).toMatchObject({ success: true, sandboxId });
    expect((await call("DELETE", "/v1/agents/agent-9/sandboxes")).status).toBe(404);
    expect(relay.sandboxes()).toEqual([]);
  });
});

describe("sandbox lifecycle", () => {
  it("TTL expiry reaps the process and its directory; a refresh after it is a 404", async () => {
    const relay = await relayWith({}, { minuteMs: 300 });
    const reaped: string[] = [];
    relay.on("sandbox-reaped", (event) => reaped.push(event.reason));
    const call = api(relay, KEY_A);
    const { sandboxId } = (await call("POST", "/v1/sandboxes", {})).json as { sandboxId: string };
    const [info] = relay.sandboxes();
    expect(existsSync(info!.directory)).toBe(true);
    expect(() => process.kill(info!.pid, 0)).not.toThrow();
    await call("POST", `/v1/sandboxes/${sandboxId}/refresh`, { ttlMinutes: 1 });
    await expect.poll(() => reaped, { timeout: 5_000 }).toEqual(["expired"]);
    expect(existsSync(info!.directory)).toBe(false);
    expect(() => process.kill(info!.pid, 0)).toThrow();
    expect((await call("POST", `/v1/sandboxes/${sandboxId}/refresh`, { ttlMinutes: 5 })).status).toBe(404);
    expect(relay.stats().tenants.find((entry) => entry.tenant === "a")).toMatchObject({ sandboxes: 0 });
  });

  it("refreshes keep it alive past its TTL", async () => {
    const relay = await relayWith({}, { minuteMs: 300 });
    const call = api(relay, KEY_A);
    const { sandboxId } = (await call("POST", "/v1/sandboxes", {})).json as { sandboxId: string };
    for (let round = 0; round < 6; round++) {
      expect((await call("POST", `/v1/sandboxes/${sandboxId}/refresh`, { ttlMinutes: 1 })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(relay.sandboxes().map((entry) => entry.sandboxId)).toEqual([sandboxId]);
  });

  it("terminate reaps at once; a process that exits by itself is reaped too; close reaps the rest and removes the base directory", async () => {
    const relay = await relayWith();
    const reaped: Array<{ reason: string; code: number | null }> = [];
    relay.on("sandbox-reaped", (event) => reaped.push({ reason: event.reason, code: event.exit.code }));
    const call = api(relay, KEY_A);
    const ids = await Promise.all(
      [0, 1, 2].map(async () => ((await call("POST", "/v1/sandboxes", {})).json as { sandboxId: string }).sandboxId),
    );
    for (const id of ids) await report(relay, KEY_A, id);
    const infos = relay.sandboxes();
    expect((await call("POST", `/v1/sandboxes/${ids[0]}/terminate`, {})).json).toEqual({ success: true, sandboxId: ids[0] });
    expect(reaped).toEqual([{ reason: "terminated", code: 0 }]);
    expect(existsSync(infos.find((entry) => entry.sandboxId === ids[0])!.directory)).toBe(false);
    probe.exit(infos.find((entry) => entry.sandboxId === ids[1])!.deviceId);
    await expect.poll(() => reaped.length, { timeout: 5_000 }).toBe(2);
    expect(reaped[1]).toMatchObject({ reason: "exited" });
    const base = infos[0]!.directory.replace(/\/sandbox-[^/]+$/, "");
    await relay.close();
    expect(reaped.map((entry) => entry.reason)).toEqual(["terminated", "exited", "shutdown"]);
    expect(existsSync(base)).toBe(false);
  });
});

describe("what a sandbox gets", () => {
  it("exactly the configured environment plus what the listener needs — none of the relay's own", async () => {
    process.env.TOOLRELAY_RELAY_ONLY_CANARY = "relay-secret";
    try {
      const relay = await relayWith();
      const { sandboxId, deviceId, connectionName } = (await api(relay, KEY_A)("POST", "/v1/sandboxes", {})).json as Record<string, string>;
      const seen = await report(relay, KEY_A, sandboxId!);
      const [info] = relay.sandboxes();
      expect(Object.keys(seen.env).sort()).toEqual(
        [
          "HOME",
          "IGNORE_SELF_HOSTED_LISTENER_ERROR",
          "LETTA_API_KEY",
          "LETTA_BASE_URL",
          "LETTA_LISTENER_DEVICE_ID",
          "PROBE_CONFIGURED",
          "TMPDIR",
        ].sort(),
      );
      expect(seen.env).toMatchObject({
        PROBE_CONFIGURED: "yes",
        LETTA_BASE_URL: relay.httpUrl,
        LETTA_LISTENER_DEVICE_ID: deviceId,
        HOME: `${info!.directory}/home`,
        TMPDIR: `${info!.directory}/tmp`,
      });
      expect(seen.env.LETTA_API_KEY).toMatch(/^sbx_/);
      expect(seen.env.LETTA_API_KEY).not.toBe(KEY_A);
      expect(seen.cwd).toBe(info!.workspace);
      expect(seen.argv).toEqual([probe.canary, "--env-name", connectionName]);
      expect(seen.workspaceWritable).toBe(true);
    } finally {
      delete process.env.TOOLRELAY_RELAY_ONLY_CANARY;
    }
  });

  it('"namespace" isolation: the caller\'s files do not exist for it; "none": they do', async () => {
    const isolated = await relayWith();
    const first = (await api(isolated, KEY_A)("POST", "/v1/sandboxes", {})).json as { sandboxId: string };
    const inside = await report(isolated, KEY_A, first.sandboxId);
    expect(inside.canaryVisible).toBe(false);
    expect(inside.rootEntries).not.toContain("work");
    expect(inside.rootEntries).toEqual(expect.arrayContaining(["usr", "etc", "proc", "dev", "tmp"]));
    const open = await relayWith({}, { isolation: "none" });
    const second = (await api(open, KEY_A)("POST", "/v1/sandboxes", {})).json as { sandboxId: string };
    expect((await report(open, KEY_A, second.sandboxId)).canaryVisible).toBe(true);
  });

  it("refuses configuration it cannot honour: a relative or missing command, an env the relay sets, a bad isolation", async () => {
    const bad = (sandbox: Parameters<SandboxProbe["options"]>[0]) => startRelay({ apiKeys: [KEY_A], sandbox: probe.options(sandbox) });
    await expect(bad({ command: "node" })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
      message: expect.stringContaining("absolute path"),
    });
    await expect(bad({ command: "/nonexistent/letta" })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
      message: expect.stringContaining("not an executable"),
    });
    await expect(bad({ env: { HOME: "/root" } })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
      message: expect.stringContaining("set by the relay"),
    });
    await expect(bad({ env: { "bad name": "x" } })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    await expect(bad({ isolation: "chroot" as never })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    await expect(bad({ readOnlyPaths: ["relative/path"] })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
  });
});

describe("sandboxes and tenants", () => {
  it("another tenant's sandbox is a 404 on every route and is not listed; a tenant's cap is a 429", async () => {
    const relay = await relayWith({ maxSandboxesPerTenant: 1 });
    const a = api(relay, KEY_A);
    const b = api(relay, KEY_B);
    const { sandboxId } = (await a("POST", "/v1/agents/agent-1/sandboxes", {})).json as { sandboxId: string };
    expect((await b("POST", `/v1/sandboxes/${sandboxId}/refresh`, {})).status).toBe(404);
    expect((await b("POST", `/v1/sandboxes/${sandboxId}/terminate`, {})).status).toBe(404);
    expect((await b("GET", `/v1/sandboxes/${sandboxId}`)).status).toBe(404);
    expect((await b("DELETE", "/v1/agents/agent-1/sandboxes")).status).toBe(404);
    expect((await b("GET", "/_relay/sandboxes")).json).toEqual([]);
    // B's create for the same agent id is B's own sandbox, not a resume of A's.
    expect((await b("POST", "/v1/agents/agent-1/sandboxes", {})).json).toMatchObject({ resumed: false });
    expect((await a("GET", `/v1/sandboxes/${sandboxId}`)).json).toMatchObject({ sandboxId, tenant: "a" });
    // A's second key shares A's sandboxes; A is at its cap.
    expect((await api(relay, KEY_A2)("GET", `/v1/sandboxes/${sandboxId}`)).status).toBe(200);
    expect((await a("POST", "/v1/sandboxes", {})).status).toBe(429);
  });

  it("a sandbox's key registers its own device only and opens nothing else; no other key registers that device", async () => {
    const relay = await relayWith();
    const { sandboxId, deviceId } = (await api(relay, KEY_A)("POST", "/v1/sandboxes", {})).json as Record<string, string>;
    const sandboxKey = (await report(relay, KEY_A, sandboxId!)).env.LETTA_API_KEY!;
    const asSandbox = api(relay, sandboxKey);
    expect((await asSandbox("GET", "/v1/environments")).status).toBe(403);
    expect((await asSandbox("POST", "/v1/sandboxes", {})).status).toBe(403);
    expect((await asSandbox("GET", "/_relay/sandboxes")).status).toBe(403);
    expect((await asSandbox("POST", "/v1/environments/register", { deviceId: "someone-else", connectionName: "x" })).status).toBe(403);
    expect((await api(relay, KEY_A2)("POST", "/v1/environments/register", { deviceId, connectionName: "hijack" })).status).toBe(409);
    expect((await api(relay, KEY_B)("POST", "/v1/environments/register", { deviceId, connectionName: "hijack" })).status).toBe(409);
    const registered = await asSandbox("POST", "/v1/environments/register", { deviceId, connectionName: "sandbox" });
    expect(registered.status).toBe(200);
    expect(relay.environments()).toEqual([expect.objectContaining({ deviceId, tenant: "a", sandboxId })]);
    const connectionId = (registered.json as { connectionId: string }).connectionId;
    const sdk = await httpJson(`${relay.httpUrl}/v1/environments/${connectionId}/status/ws?channel=control`, {
      headers: {
        authorization: `Bearer ${sandboxKey}`,
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
      },
    });
    expect(sdk.status).toBe(403);
    // Terminating the sandbox removes its environment and revokes its key.
    await api(relay, KEY_A)("POST", `/v1/sandboxes/${sandboxId}/terminate`, {});
    expect(relay.environments()).toEqual([]);
    expect((await asSandbox("POST", "/v1/environments/register", { deviceId, connectionName: "sandbox" })).status).toBe(401);
  });
});
