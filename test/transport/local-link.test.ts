import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import { LocalLink, normaliseAppServerUrl } from "../../packages/toolrelay/src/transport/local-link.js";
import { letTimePass, until } from "../support/wait.js";

interface TestServer {
  url: string;
  port: number;
  sockets: WebSocket[];
  upgrades: IncomingMessage[];
  received: string[];
  close(): Promise<void>;
}

const servers: TestServer[] = [];
const links: LocalLink[] = [];

async function startServer(
  options: { port?: number; status?: number; onConnection?: (socket: WebSocket) => void } = {},
): Promise<TestServer> {
  const http: Server = createServer();
  const wss = new WebSocketServer({ noServer: true });
  const server: TestServer = {
    url: "",
    port: 0,
    sockets: [],
    upgrades: [],
    received: [],
    close: async () => {
      for (const socket of server.sockets) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
    },
  };
  http.on("upgrade", (request, socket, head) => {
    server.upgrades.push(request);
    if (options.status) {
      socket.end(`HTTP/1.1 ${options.status} Nope\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      server.sockets.push(ws);
      ws.on("message", (data) => server.received.push(data.toString()));
      options.onConnection?.(ws);
    });
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, "127.0.0.1", () => resolve()));
  server.port = (http.address() as AddressInfo).port;
  server.url = `ws://127.0.0.1:${server.port}/ws`;
  servers.push(server);
  return server;
}

function track(link: LocalLink): LocalLink {
  links.push(link);
  return link;
}

afterEach(async () => {
  for (const link of links.splice(0)) await link.close();
  for (const server of servers.splice(0)) await server.close();
});

describe("normaliseAppServerUrl", () => {
  it("maps http to ws, adds /ws, strips channel", () => {
    expect(normaliseAppServerUrl("http://127.0.0.1:4500")).toBe("ws://127.0.0.1:4500/ws");
    expect(normaliseAppServerUrl("https://example.test/")).toBe("wss://example.test/ws");
    expect(normaliseAppServerUrl("ws://127.0.0.1:1/ws?channel=control")).toBe("ws://127.0.0.1:1/ws");
  });

  it("refuses a token or credentials in the URL and non-WebSocket schemes", () => {
    expect(() => normaliseAppServerUrl("ws://127.0.0.1:1/ws?token=secret")).toThrow(/token/);
    expect(() => normaliseAppServerUrl("ws://user:pw@127.0.0.1:1/ws")).toThrow(/credentials/);
    expect(() => normaliseAppServerUrl("ftp://127.0.0.1:1/")).toThrow(/ws:\/\//);
    expect(() => normaliseAppServerUrl("not a url")).toThrow(/not a URL/);
  });
});

describe("LocalLink", () => {
  it("sends the token as a Bearer header and never in the URL", async () => {
    const server = await startServer();
    const link = track(new LocalLink({ url: server.url, token: "  canary-token-123  ", pingIntervalMs: 0 }));
    await link.connect();
    expect(link.state).toBe("open");
    const upgrade = server.upgrades[0]!;
    expect(upgrade.headers.authorization).toBe("Bearer canary-token-123");
    expect(upgrade.url).toBe("/ws");
    expect(upgrade.url).not.toContain("canary");
  });

  it("rejects an empty token at construction", () => {
    expect(() => new LocalLink({ url: "ws://127.0.0.1:1/ws", token: "   " })).toThrow(/empty/);
  });

  it("maps a 401 upgrade answer to UNAUTHORIZED and does not leak the token", async () => {
    const server = await startServer({ status: 401 });
    const link = track(new LocalLink({ url: server.url, token: "canary-token-456", pingIntervalMs: 0 }));
    const error = await link.connect().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "UNAUTHORIZED" });
    expect(String((error as Error).message)).not.toContain("canary-token-456");
    expect(link.state).toBe("closed");
  });

  it("fails with CONNECT_FAILED when nothing listens", async () => {
    const server = await startServer();
    const url = server.url;
    await server.close();
    servers.pop();
    const link = track(new LocalLink({ url, pingIntervalMs: 0 }));
    await expect(link.connect()).rejects.toMatchObject({ code: "CONNECT_FAILED" });
  });

  it("emits decoded frames in order, and unknown / invalid frames separately without closing", async () => {
    const server = await startServer({
      onConnection: (socket) => {
        socket.send(JSON.stringify({ type: "brand_new_frame_type", x: 1 }));
        socket.send("{not json");
        socket.send(
          JSON.stringify({ type: "input_accepted", request_id: "r1", runtime: { agent_id: "a", conversation_id: "c" }, accepted: true }),
        );
      },
    });
    const link = track(new LocalLink({ url: server.url, pingIntervalMs: 0 }));
    const seen: string[] = [];
    link.on("frame", (frame) => seen.push(`frame:${frame.type}`));
    link.on("unknown-frame", (type) => seen.push(`unknown:${type}`));
    link.on("invalid-frame", () => seen.push("invalid"));
    await link.connect();
    await until(() => seen.length === 3, "seen.length === 3");
    expect(seen).toEqual(["unknown:brand_new_frame_type", "invalid", "frame:input_accepted"]);
    expect(link.state).toBe("open");
  });

  it("reconnects to a server restarted on the same port, quickly and with the same connectionId", async () => {
    const first = await startServer();
    const port = first.port;
    const link = track(new LocalLink({ url: first.url, pingIntervalMs: 0, backoff: { initialDelayMs: 20, maxDelayMs: 200 } }));
    await link.connect();
    const connectionId = link.connectionId;
    const states: string[] = [];
    link.on("state", (state) => states.push(state));
    let reconnected = false;
    link.on("reconnected", () => (reconnected = true));
    await first.close();
    servers.splice(servers.indexOf(first), 1);
    await until(() => link.state === "reconnecting", "link.state === 'reconnecting'");
    await startServer({ port });
    await until(() => reconnected, "reconnected", 10_000);
    expect(link.state).toBe("open");
    expect(link.connectionId).toBe(connectionId);
    expect(states).toContain("reconnecting");
    expect(link.send({ type: "sync", runtime: { agent_id: "a", conversation_id: "c" } })).toBe(true);
  });

  it("send() returns false when the link is not open", async () => {
    const link = track(new LocalLink({ url: "ws://127.0.0.1:1/ws", pingIntervalMs: 0 }));
    expect(link.send({ type: "sync", runtime: { agent_id: "a", conversation_id: "c" } })).toBe(false);
  });

  it("detects a half-open link by protocol pings and terminates it", async () => {
    const server = await startServer();
    const link = track(new LocalLink({ url: server.url, pingIntervalMs: 50, pongTimeoutMs: 100, reconnect: false }));
    await link.connect();
    // Stop the server side from answering pings: pause the raw socket.
    (server.sockets[0] as unknown as { _socket: { pause(): void } })._socket.pause();
    const errors: string[] = [];
    link.on("error", (error) => errors.push(error.message));
    await until(() => link.state === "closed", "link.state === 'closed'", 2_000);
    expect(errors.some((message) => message.includes("presumed dead"))).toBe(true);
  });

  it("closes an oversize inbound frame's socket (1009) and reconnects", async () => {
    let connections = 0;
    const server = await startServer({
      onConnection: (socket) => {
        connections++;
        if (connections === 1) socket.send("x".repeat(2_048));
      },
    });
    const link = track(new LocalLink({ url: server.url, pingIntervalMs: 0, maxPayload: 1_024, backoff: { initialDelayMs: 10 } }));
    let reconnected = false;
    link.on("reconnected", () => (reconnected = true));
    await link.connect();
    await until(() => reconnected, "reconnected", 5_000);
    expect(connections).toBe(2);
  });

  it("close() is idempotent and stops reconnecting", async () => {
    const server = await startServer();
    const link = track(new LocalLink({ url: server.url, pingIntervalMs: 0 }));
    await link.connect();
    await link.close();
    await link.close();
    expect(link.state).toBe("closed");
    await letTimePass(100); // on purpose: no reconnect may come within this window
    expect(server.sockets.length).toBe(1);
  });
});
