import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { hostnameOf } from "../../packages/relay/src/relay-auth.js";
import { silentRelayLogger } from "../../packages/relay/src/relay-options.js";
import { TenantDirectory } from "../../packages/relay/src/tenant-directory.js";
import { startRelay } from "../../packages/relay/src/index.js";
import { httpJson } from "./support/http-json.js";
import { recordingLogger, RelayFixture, TEST_KEY } from "./support/relay-fixture.js";

const fixture = new RelayFixture();
afterEach(() => fixture.cleanup());

type Header = [string, string];

/** Sends a raw HTTP request (exact headers, duplicates allowed); resolves with status and body. */
function rawRequest(
  port: number,
  lines: { method: string; path: string; headers: Header[]; body?: string },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("no answer"));
    }, 3_000);
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString();
      // An accepted upgrade stays open: the status line is enough.
      if (text.startsWith("HTTP/1.1 101")) socket.destroy();
    });
    socket.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString();
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0), text });
    });
    socket.on("error", () => {});
    const body = lines.body ?? "";
    const head = [`${lines.method} ${lines.path} HTTP/1.1`, ...lines.headers.map(([name, value]) => `${name}: ${value}`)];
    if (body) head.push(`Content-Length: ${Buffer.byteLength(body)}`, "Content-Type: application/json");
    head.push("Connection: close");
    socket.write(`${head.join("\r\n")}\r\n\r\n${body}`);
  });
}

function upgradeHeaders(port: number): Header[] {
  return [
    ["Host", `127.0.0.1:${port}`],
    ["Upgrade", "websocket"],
    ["Connection", "Upgrade"],
    ["Sec-WebSocket-Version", "13"],
    ["Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="],
  ];
}

const bearer = (key: string): Header => ["Authorization", `Bearer ${key}`];

describe("auth matrix", () => {
  it.each([
    ["no credentials", [], "", 401],
    ["a wrong key", [bearer("wrong-key")], "", 401],
    ["a key of the wrong length", [bearer(TEST_KEY.slice(0, -1))], "", 401],
    ["a key with a suffix", [bearer(`${TEST_KEY}x`)], "", 401],
    ["a malformed header", [["Authorization", TEST_KEY] as Header], "", 401],
    ["two Authorization headers", [bearer(TEST_KEY), bearer(TEST_KEY)], "", 401],
    ["the key in the query string", [], `&token=${TEST_KEY}`, 401],
    ["the key in the query string besides a valid header", [bearer(TEST_KEY)], `&token=${TEST_KEY}`, 401],
    ["an Origin header", [bearer(TEST_KEY), ["Origin", "http://127.0.0.1"] as Header], "", 403],
    ["a valid key", [bearer(TEST_KEY)], "", 101],
    ["a valid key with a lower-case scheme", [["Authorization", `bearer ${TEST_KEY}`] as Header], "", 101],
  ] as const)("SDK status socket with %s → %i", async (_name, headers, query, expected) => {
    await fixture.start();
    const listener = await fixture.listener();
    const path = `/v1/environments/${listener.answer.connectionId}/status/ws?channel=control&agentId=a${query}`;
    const { status, text } = await rawRequest(fixture.relay.port, {
      method: "GET",
      path,
      headers: [...upgradeHeaders(fixture.relay.port), ...headers],
    });
    expect(status).toBe(expected);
    expect(text).not.toContain(TEST_KEY);
  });

  it.each([
    ["no credentials", [], 401],
    ["a wrong key", [bearer("nope")], 401],
    ["an Origin header", [bearer(TEST_KEY), ["Origin", "https://evil.example"] as Header], 403],
    ["a valid key", [bearer(TEST_KEY)], 101],
  ] as const)("listener socket with %s → %i", async (_name, headers, expected) => {
    await fixture.start();
    const listener = await fixture.listener();
    const path = `/v1/environments/${listener.answer.connectionId}/listener/ws?deviceId=${listener.deviceId}&channel=control&connectionGeneration=g&connectionAttempt=7`;
    const { status } = await rawRequest(fixture.relay.port, {
      method: "GET",
      path,
      headers: [...upgradeHeaders(fixture.relay.port), ...headers],
    });
    expect(status).toBe(expected);
  });

  it.each([
    ["a foreign Host", [["Host", "evil.example"]] as Header[], 403],
    ["a foreign Host with a port", [["Host", "attacker.test:80"]] as Header[], 403],
    ["a loopback name", [["Host", "localhost:1"]] as Header[], 101],
  ])("an upgrade with %s → %i", async (_name, host, expected) => {
    await fixture.start();
    const listener = await fixture.listener();
    const path = `/v1/environments/${listener.answer.connectionId}/status/ws?channel=control&agentId=a`;
    const headers = [...host, ...upgradeHeaders(fixture.relay.port).slice(1), bearer(TEST_KEY)];
    const { status } = await rawRequest(fixture.relay.port, { method: "GET", path, headers });
    expect(status).toBe(expected);
  });

  it("REST routes need the key and refuse browsers and foreign hosts", async () => {
    await fixture.start();
    const port = fixture.relay.port;
    const host: Header = ["Host", `127.0.0.1:${port}`];
    const body = JSON.stringify({ deviceId: "d", connectionName: "n" });
    const register = (headers: Header[]) => rawRequest(port, { method: "POST", path: "/v1/environments/register", headers, body });
    expect((await register([host])).status).toBe(401);
    expect((await register([host, bearer("nope")])).status).toBe(401);
    expect((await register([host, bearer(TEST_KEY), ["Origin", "null"]])).status).toBe(403);
    expect((await register([["Host", "rebind.example"], bearer(TEST_KEY)])).status).toBe(403);
    expect((await register([host, bearer(TEST_KEY)])).status).toBe(200);
    expect((await rawRequest(port, { method: "GET", path: "/v1/environments", headers: [host] })).status).toBe(401);
    expect((await rawRequest(port, { method: "GET", path: "/healthz", headers: [host] })).status).toBe(200);
    expect((await rawRequest(port, { method: "GET", path: "/_relay/environments", headers: [host, bearer(TEST_KEY)] })).status).toBe(404);
  });

  it("refuses an oversized register body with 413", async () => {
    await fixture.start({ maxBodyBytes: 1024 });
    const port = fixture.relay.port;
    const body = JSON.stringify({ deviceId: "d", connectionName: "n", metadata: { pad: "x".repeat(4096) } });
    const { status } = await rawRequest(port, {
      method: "POST",
      path: "/v1/environments/register",
      headers: [["Host", `127.0.0.1:${port}`], bearer(TEST_KEY)],
      body,
    });
    expect(status).toBe(413);
  });

  it("accepts the query token only when allowQueryToken is on, and only on SDK sockets", async () => {
    await fixture.start({ allowQueryToken: true });
    const listener = await fixture.listener();
    const port = fixture.relay.port;
    const sdkPath = `/v1/environments/${listener.answer.connectionId}/status/ws?channel=control&agentId=a`;
    expect((await rawRequest(port, { method: "GET", path: `${sdkPath}&token=${TEST_KEY}`, headers: upgradeHeaders(port) })).status).toBe(
      101,
    );
    expect((await rawRequest(port, { method: "GET", path: `${sdkPath}&token=wrong`, headers: upgradeHeaders(port) })).status).toBe(401);
    const listenerPath = `/v1/environments/${listener.answer.connectionId}/listener/ws?channel=control&connectionGeneration=g&connectionAttempt=1`;
    expect(
      (await rawRequest(port, { method: "GET", path: `${listenerPath}&token=${TEST_KEY}`, headers: upgradeHeaders(port) })).status,
    ).toBe(401);
  });

  it("without keys on loopback, accepts requests without credentials", async () => {
    await fixture.start({ apiKeys: [] });
    const port = fixture.relay.port;
    const body = JSON.stringify({ deviceId: "d", connectionName: "n" });
    const { status } = await rawRequest(port, {
      method: "POST",
      path: "/v1/environments/register",
      headers: [["Host", `127.0.0.1:${port}`]],
      body,
    });
    expect(status).toBe(200);
  });
});

describe("bind and secrets", () => {
  it("refuses a non-loopback bind without API keys", async () => {
    await expect(startRelay({ host: "0.0.0.0" })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
  });

  it("allows a non-loopback bind with API keys", async () => {
    const relay = await startRelay({ host: "0.0.0.0", apiKeys: [TEST_KEY] });
    try {
      const response = await httpJson(`http://127.0.0.1:${relay.port}/healthz`);
      expect(response.status).toBe(200);
    } finally {
      await relay.close();
    }
  });

  it("never writes a key to the log, also at debug level and for refused keys", async () => {
    const canary = "canary-7f3c9e1b5a2d";
    const logger = recordingLogger();
    await fixture.start({ apiKeys: [canary], logger, allowQueryToken: true });
    const port = fixture.relay.port;
    const host: Header = ["Host", `127.0.0.1:${port}`];
    await rawRequest(port, { method: "POST", path: "/v1/environments/register", headers: [host, bearer(`${canary}-wrong`)], body: "{}" });
    await rawRequest(port, { method: "GET", path: `/v1/environments?token=${canary}`, headers: [host] });
    await rawRequest(port, {
      method: "GET",
      path: `/v1/environments/x/status/ws?channel=control&agentId=a&token=${canary}`,
      headers: upgradeHeaders(port),
    });
    const body = JSON.stringify({ deviceId: "d", connectionName: "n" });
    const registered = await rawRequest(port, { method: "POST", path: "/v1/environments/register", headers: [host, bearer(canary)], body });
    expect(registered.status).toBe(200);
    expect(logger.lines.length).toBeGreaterThan(3);
    expect(logger.lines.join("\n")).not.toContain(canary);
    expect(registered.text).not.toContain(canary);
  });
});

describe("helpers", () => {
  it("finds a key's tenant and roles by digest, and knows a relay without keys", () => {
    const limits = { environment: 1, session: 1, outstandingCall: 1, sandbox: 1, unackedBytes: 1024 };
    const directory = new TenantDirectory(
      new Map([
        ["alpha", { tenant: "team-a", roles: ["listener"] as const }],
        ["beta", { tenant: "team-b", roles: ["listener", "sdk"] as const }],
        ["gamma", { tenant: "team-a", roles: ["sdk"] as const }],
      ]),
      limits,
      silentRelayLogger,
    );
    expect(directory.requiresKeys).toBe(true);
    expect(directory.match("beta")?.tenant.name).toBe("team-b");
    expect(directory.match("alpha")?.roles).toEqual(["listener"]);
    expect(directory.match("gamma")?.roles).toEqual(["sdk"]);
    expect(directory.match("gamma")?.tenant).toBe(directory.match("alpha")?.tenant);
    expect(directory.match("gamma")?.keyId).not.toBe(directory.match("alpha")?.keyId);
    expect(directory.match("bet")).toBeUndefined();
    const open = new TenantDirectory(new Map(), limits, silentRelayLogger);
    expect(open.requiresKeys).toBe(false);
    expect(open.anonymous?.tenant.name).toBe("default");
    expect(open.anonymous?.roles).toEqual(["listener", "sdk"]);
  });

  it("parses Host headers", () => {
    expect(hostnameOf("[::1]:8080")).toBe("::1");
    expect(hostnameOf("LocalHost:1")).toBe("localhost");
    expect(hostnameOf("a b")).toBeUndefined();
    expect(hostnameOf("[::1]x")).toBeUndefined();
  });
});
