/**
 * Handshake security of the servers we ship (scripted runtime, relay) and of the
 * SDK's own handshakes, over raw loopback sockets (node:net):
 * - the auth matrix: missing, wrong, wrong-length token, wrong scheme, token in
 *   the query string instead of the header, duplicate Authorization headers —
 *   all rejected with 401 (a correct token is accepted: the control case);
 * - browser-style handshakes (an `Origin`) and DNS-rebinding ones (a foreign
 *   `Host`) rejected before any frame is read: the upgrade and a WebSocket frame
 *   go out in ONE write, and the frame must never be processed;
 * - the SDK sends exactly one Authorization header, never a token in a URL, and no Origin.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { startRelay, type Relay } from "../../packages/relay/src/index.js";
import { startScriptedRuntime, type ScriptedRuntime } from "../../packages/toolrelay/src/testing/index.js";
import { CloudLink } from "../../packages/toolrelay/src/transport/cloud-link.js";
import { LocalLink } from "../../packages/toolrelay/src/transport/local-link.js";
import { maskedTextFrame, rawUpgrade, upgradeHeaders } from "./support-security/raw-upgrade.js";
import { SingleSocketListener } from "./support-security/relay-listener.js";

const TOKEN = "tr-secret-0123456789abcdef";
const cleanups: Array<() => Promise<void> | void> = [];

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Target {
  name: string;
  port: number;
  path: string;
}

type AuthCase = [name: string, headers: Array<[string, string]>, query?: string];

/** Header sets of the auth matrix; every one must be refused with 401. */
function authMatrix(): AuthCase[] {
  const wrongSameLength = TOKEN.replace(/.$/, (last) => (last === "x" ? "y" : "x"));
  return [
    ["missing", []],
    ["wrong (same length)", [["Authorization", `Bearer ${wrongSameLength}`]]],
    ["wrong-length (shorter)", [["Authorization", `Bearer ${TOKEN.slice(0, -4)}`]]],
    ["wrong-length (longer)", [["Authorization", `Bearer ${TOKEN}0000`]]],
    ["empty bearer", [["Authorization", "Bearer "]]],
    ["wrong scheme (Basic)", [["Authorization", `Basic ${TOKEN}`]]],
    ["no scheme", [["Authorization", TOKEN]]],
    ["token in the query string instead of the header", [], `token=${encodeURIComponent(TOKEN)}`],
    ["access_token in the query string", [], `access_token=${encodeURIComponent(TOKEN)}`],
    [
      "duplicate Authorization: correct then wrong",
      [
        ["Authorization", `Bearer ${TOKEN}`],
        ["Authorization", `Bearer ${wrongSameLength}`],
      ],
    ],
    [
      "duplicate Authorization: wrong then correct",
      [
        ["Authorization", `Bearer ${wrongSameLength}`],
        ["Authorization", `Bearer ${TOKEN}`],
      ],
    ],
    [
      "duplicate Authorization: correct twice",
      [
        ["Authorization", `Bearer ${TOKEN}`],
        ["authorization", `Bearer ${TOKEN}`],
      ],
    ],
  ];
}

function withQuery(path: string, query: string | undefined): string {
  if (query === undefined) return path;
  return path.includes("?") ? `${path}&${query}` : `${path}?${query}`;
}

describe("handshake auth matrix (raw upgrades over node:net)", () => {
  let runtime: ScriptedRuntime;
  let relay: Relay;
  const targets: Target[] = [];

  beforeAll(async () => {
    runtime = await startScriptedRuntime({ script: () => undefined, authToken: TOKEN, heartbeatIntervalMs: 0 });
    cleanups.push(() => runtime.close());
    relay = await startRelay({ apiKeys: [TOKEN], listenerMode: "single", heartbeatIntervalMs: 0 });
    cleanups.push(() => relay.close());
    const listener = await SingleSocketListener.start(relay.httpUrl, TOKEN);
    cleanups.push(() => listener.terminate());
    const connectionId = listener.environment.connectionId;
    targets.push({ name: "scripted runtime", port: runtime.port, path: "/ws" });
    targets.push({
      name: "relay (SDK status socket)",
      port: relay.port,
      path: `/v1/environments/${connectionId}/status/ws?channel=control&sessionId=auth-matrix`,
    });
    targets.push({
      name: "relay (listener socket)",
      port: relay.port,
      path: `${new URL(listener.environment.wsUrl).pathname}?deviceId=${listener.deviceId}&connectionName=x`,
    });
  });

  it("accepts the correct token (control case: the raw handshake itself works)", async () => {
    for (const target of targets) {
      const answer = await rawUpgrade({
        port: target.port,
        path: target.path,
        headers: [...upgradeHeaders(), ["Authorization", `Bearer ${TOKEN}`]],
      });
      expect(answer.status, target.name).toBe(101);
    }
  });

  for (const [name, headers, query] of authMatrix()) {
    it(`rejects ${name} with 401 on every server`, async () => {
      const refusals: string[] = [];
      for (const target of targets) {
        const answer = await rawUpgrade({
          port: target.port,
          path: withQuery(target.path, query),
          headers: [...upgradeHeaders(), ...headers],
        });
        if (answer.status !== 401) refusals.push(`${target.name}: HTTP ${answer.status}`);
        expect(answer.text, `${target.name} echoed the token`).not.toContain(TOKEN);
      }
      expect(refusals, "servers that did not answer 401").toEqual([]);
    });
  }
});

const PROBE_FRAME = '{"type":"app_server_info","request_id":"probe-before-auth"}';
const RELAY_PROBE_FRAME = '{"type":"sync","request_id":"probe-before-auth","runtime":{"agent_id":"agent-p","conversation_id":"conv-p"}}';

/** Browser-style and DNS-rebinding handshakes: [name, extra headers, Host value]. */
function hostileOrigins(port: number): Array<[string, Array<[string, string]>, string]> {
  const host = `127.0.0.1:${port}`;
  return [
    ["an Origin header (browser page)", [["Origin", "http://evil.example"]], host],
    ["Origin: null (sandboxed iframe, file://)", [["Origin", "null"]], host],
    ["a loopback Origin", [["Origin", `http://localhost:${port}`]], host],
    ["a foreign Host (DNS rebinding)", [], `evil.example:${port}`],
    ["a Host that only starts with a loopback name", [], `127.0.0.1.evil.example:${port}`],
    ["a foreign Host and an Origin", [["Origin", "http://evil.example"]], `evil.example:${port}`],
  ];
}

describe("Origin / foreign Host: refused before any frame is read", () => {
  it("scripted runtime (no auth, loopback): refused, and the frame written with the upgrade is never processed", async () => {
    const runtime = await startScriptedRuntime({ script: () => undefined, heartbeatIntervalMs: 0 });
    try {
      // Control: the same single write without Origin / with a loopback Host is accepted and its frame processed.
      const accepted = await rawUpgrade({ port: runtime.port, path: "/ws", trailer: maskedTextFrame(PROBE_FRAME), settleMs: 300 });
      expect(accepted.status).toBe(101);
      expect(runtime.frames.map((record) => record.text)).toContain(PROBE_FRAME);
      const failures: string[] = [];
      for (const [name, headers, host] of hostileOrigins(runtime.port)) {
        const processedBefore = runtime.frames.length;
        const answer = await rawUpgrade({
          port: runtime.port,
          path: "/ws",
          host,
          headers: [...upgradeHeaders(), ...headers],
          trailer: maskedTextFrame(PROBE_FRAME),
          settleMs: 300,
        });
        if (answer.status < 400 || answer.status >= 500) failures.push(`${name}: HTTP ${answer.status}`);
        if (runtime.frames.length !== processedBefore) failures.push(`${name}: the frame was processed`);
      }
      expect(failures).toEqual([]);
    } finally {
      await runtime.close();
    }
  });

  for (const apiKeys of [[], [TOKEN]]) {
    it(`relay (${apiKeys.length === 0 ? "no keys" : "with keys"}, loopback): refused, and the frame written with the upgrade is never forwarded`, async () => {
      const relay = await startRelay({ apiKeys, listenerMode: "single", heartbeatIntervalMs: 0 });
      const listener = await SingleSocketListener.start(relay.httpUrl, apiKeys[0]);
      try {
        const path = `/v1/environments/${listener.environment.connectionId}/status/ws?channel=control&sessionId=origin-probe&agentId=agent-p&conversationId=conv-p`;
        const auth: Array<[string, string]> = apiKeys.length > 0 ? [["Authorization", `Bearer ${TOKEN}`]] : [];
        const accepted = await rawUpgrade({
          port: relay.port,
          path,
          headers: [...upgradeHeaders(), ...auth],
          trailer: maskedTextFrame(RELAY_PROBE_FRAME),
          settleMs: 300,
        });
        expect(accepted.status).toBe(101);
        expect(listener.frames).toContain(RELAY_PROBE_FRAME);
        const failures: string[] = [];
        for (const [name, headers, host] of hostileOrigins(relay.port)) {
          const forwardedBefore = listener.frames.length;
          const answer = await rawUpgrade({
            port: relay.port,
            path,
            host,
            headers: [...upgradeHeaders(), ...auth, ...headers],
            trailer: maskedTextFrame(RELAY_PROBE_FRAME),
            settleMs: 300,
          });
          if (answer.status < 400 || answer.status >= 500) failures.push(`${name}: HTTP ${answer.status}`);
          if (listener.frames.length !== forwardedBefore) failures.push(`${name}: the frame was forwarded`);
        }
        expect(failures).toEqual([]);
      } finally {
        listener.terminate();
        await relay.close();
      }
    });
  }
});

/** A loopback HTTP server that records every upgrade request and refuses it with 401. */
async function recordingServer(): Promise<{ server: Server; port: number; upgrades: IncomingMessage[] }> {
  const upgrades: IncomingMessage[] = [];
  const server = createServer();
  server.on("upgrade", (request: IncomingMessage, socket: Socket) => {
    upgrades.push(request);
    socket.end("HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { server, port: (server.address() as AddressInfo).port, upgrades };
}

function headerCount(request: IncomingMessage, name: string): number {
  let count = 0;
  for (let index = 0; index < request.rawHeaders.length; index += 2) if (request.rawHeaders[index]!.toLowerCase() === name) count++;
  return count;
}

describe("the SDK's own handshakes", () => {
  it("local link: one Authorization header even when extra headers carry others; no token in the URL; no Origin", async () => {
    const { port, upgrades } = await recordingServer();
    const link = new LocalLink({
      url: `ws://127.0.0.1:${port}/ws`,
      token: TOKEN,
      headers: { authorization: "Bearer injected-1", Authorization: "Bearer injected-2", "x-extra": "1" },
      reconnect: false,
      pingIntervalMs: 0,
    });
    link.on("error", () => undefined);
    await expect(link.connect()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await link.close();
    expect(upgrades).toHaveLength(1);
    const request = upgrades[0]!;
    expect(headerCount(request, "authorization")).toBe(1);
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request.headers.origin).toBeUndefined();
    expect(request.url).not.toContain(TOKEN);
    expect(() => new LocalLink({ url: `ws://127.0.0.1:${port}/ws?token=${TOKEN}` })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS" }),
    );
  });

  it("cloud link (header auth): one Authorization header per socket; no token in either URL; no Origin", async () => {
    const { port, upgrades } = await recordingServer();
    const link = new CloudLink({
      connectionId: "env-1",
      apiKey: TOKEN,
      baseUrl: `http://127.0.0.1:${port}`,
      headers: { authorization: "Bearer injected", "x-project-id": "p" },
      reconnect: false,
      pingIntervalMs: 0,
    });
    link.on("error", () => undefined);
    await expect(link.connect()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await link.close();
    expect(upgrades).toHaveLength(2);
    for (const request of upgrades) {
      expect(headerCount(request, "authorization")).toBe(1);
      expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(request.headers.origin).toBeUndefined();
      expect(request.url).not.toContain(TOKEN);
    }
  });

  it("a raw ws server sees no Origin from the SDK (so servers may refuse every Origin)", async () => {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    const origins: Array<string | undefined> = [];
    server.on("connection", (socket, request) => {
      origins.push(request.headers.origin);
      socket.close(1000);
    });
    const link = new LocalLink({ url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`, reconnect: false, pingIntervalMs: 0 });
    link.on("error", () => undefined);
    await link.connect();
    await link.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(origins).toEqual([undefined]);
  });
});
