/**
 * The fault proxy (toolrelay/testing), one fault at a time, over real loopback
 * TCP between a plain client and a plain target server.
 */
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { startFaultProxy, type FaultProxy } from "../../packages/toolrelay/src/testing/index.js";
import { connectClient, startTcpTarget, textOf, type TcpTarget } from "./support/tcp-peers.js";
import { letTimePass, scaled, until } from "./support/wait.js";

let target: TcpTarget | undefined;
let proxy: FaultProxy | undefined;
const sockets: Socket[] = [];
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await proxy?.close();
  await target?.close();
  proxy = undefined;
  target = undefined;
});

async function setUp(options: { echo?: boolean } = {}) {
  target = await startTcpTarget(options);
  proxy = await startFaultProxy({ target: { host: "127.0.0.1", port: target.port } });
  return { target, proxy };
}

describe("startFaultProxy", () => {
  it("forwards bytes both ways unchanged and counts them", async () => {
    const { target, proxy } = await setUp({ echo: true });
    const client = await connectClient(proxy.port, sockets);
    client.socket.write("hello ");
    client.socket.write("proxy");
    await until(() => textOf(client) === "hello proxy", "echo through the proxy");
    expect(textOf(target.connections[0]!)).toBe("hello proxy");
    expect(proxy.stats).toMatchObject({
      activeConnections: 1,
      acceptedConnections: 1,
      bytesToTarget: 11,
      bytesToClient: 11,
      bytesDropped: 0,
    });
  });

  it("forwards a FIN as a FIN and forgets the connection once both sides closed", async () => {
    const { target, proxy } = await setUp();
    const client = await connectClient(proxy.port, sockets);
    client.socket.end("bye");
    const server = await until(() => target.connections[0]?.ended && target.connections[0], "FIN at the target");
    expect(textOf(server)).toBe("bye");
    expect(server.errorCode).toBeUndefined();
    server.socket.end();
    await until(() => client.closed, "client closed");
    expect(client.errorCode).toBeUndefined();
    await until(() => proxy.stats.activeConnections === 0, "connection forgotten");
  });

  it("reset() aborts every connection with an RST on both sides; new connections work", async () => {
    const { target, proxy } = await setUp({ echo: true });
    const first = await connectClient(proxy.port, sockets);
    const second = await connectClient(proxy.port, sockets);
    await until(() => target.connections.length === 2, "two target connections");
    proxy.reset();
    await until(() => first.closed && second.closed, "clients closed");
    expect(first.errorCode).toBe("ECONNRESET");
    expect(second.errorCode).toBe("ECONNRESET");
    await until(() => target.connections.every((connection) => connection.closed), "target sockets closed");
    expect(target.connections.map((connection) => connection.errorCode)).toEqual(["ECONNRESET", "ECONNRESET"]);
    const third = await connectClient(proxy.port, sockets);
    third.socket.write("again");
    await until(() => textOf(third) === "again", "a new connection after reset");
  });

  it("forwards a reset from the target as a reset to the client", async () => {
    const { target, proxy } = await setUp();
    const client = await connectClient(proxy.port, sockets);
    const server = await until(() => target.connections[0], "target connection");
    server.socket.resetAndDestroy();
    await until(() => client.closed, "client closed");
    expect(client.errorCode).toBe("ECONNRESET");
  });

  it("closeAll() closes every connection with a FIN on both sides", async () => {
    const { target, proxy } = await setUp();
    const client = await connectClient(proxy.port, sockets);
    await until(() => target.connections[0], "target connection");
    proxy.closeAll();
    await until(() => client.ended && target.connections[0]!.ended, "FIN on both sides");
    expect(client.errorCode).toBeUndefined();
    expect(target.connections[0]!.errorCode).toBeUndefined();
    // Both peers answer the FIN with theirs (these test peers allow half-open sockets).
    client.socket.end();
    target.connections[0]!.socket.end();
    await until(() => proxy.stats.activeConnections === 0, "connection forgotten", 1_000);
  });

  it("blackhole(true) keeps both sockets open but drops every byte both ways and forwards no close (half-open)", async () => {
    const { target, proxy } = await setUp({ echo: true });
    const client = await connectClient(proxy.port, sockets);
    client.socket.write("before");
    await until(() => textOf(client) === "before", "echo before the blackhole");
    proxy.blackhole(true);
    client.socket.write("lost");
    target.connections[0]!.socket.write("lost too");
    await letTimePass(150); // on purpose: neither side may receive anything within this window
    expect(textOf(target.connections[0]!)).toBe("before");
    expect(textOf(client)).toBe("before");
    expect(proxy.stats.bytesDropped).toBe("lost".length + "lost too".length);
    expect(proxy.stats.halfOpenConnections).toBe(1);
    // The client goes away: the target is not told (that is what half-open means).
    client.socket.destroy();
    await until(() => proxy.stats.halfOpenConnections === 0, "the client gave up");
    await letTimePass(100); // on purpose: the target must not hear of it within this window
    expect(target.connections[0]!.closed).toBe(false);
    expect(target.connections[0]!.ended).toBe(false);
    expect(proxy.stats.activeConnections).toBe(1);
  });

  it("a connection accepted during a blackhole never reaches the target; after blackhole(false) new ones do, blackholed ones stay dead", async () => {
    const { target, proxy } = await setUp({ echo: true });
    const old = await connectClient(proxy.port, sockets);
    proxy.blackhole(true);
    const during = await connectClient(proxy.port, sockets);
    during.socket.write("ping");
    await letTimePass(100); // on purpose: the half-open connection stays open and silent
    expect(during.closed).toBe(false);
    expect(target.connections).toHaveLength(1);
    proxy.blackhole(false);
    const after = await connectClient(proxy.port, sockets);
    after.socket.write("ok");
    await until(() => textOf(after) === "ok", "echo after the blackhole");
    old.socket.write("still lost");
    during.socket.write("still lost");
    await letTimePass(100); // on purpose: nothing may come back within this window
    expect(textOf(old)).toBe("");
    expect(textOf(during)).toBe("");
  });

  it("latency(ms) delays each chunk by ms in each direction and keeps the order", async () => {
    const { proxy } = await setUp({ echo: true });
    const client = await connectClient(proxy.port, sockets);
    proxy.latency(60);
    const started = Date.now();
    for (let index = 0; index < 20; index++) client.socket.write(`${index},`);
    const expected = Array.from({ length: 20 }, (_, index) => `${index},`).join("");
    await until(() => textOf(client) === expected, "all chunks echoed in order");
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(120 - 5);
    expect(elapsed).toBeLessThan(scaled(1_000));
    proxy.latency(0);
    const fast = Date.now();
    client.socket.write("x");
    await until(() => textOf(client).endsWith("x"), "echo without latency");
    expect(Date.now() - fast).toBeLessThan(scaled(60));
    expect(() => proxy.latency(-1)).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
  });

  it("byteByByte(true) delivers one byte per chunk, intact and in order", async () => {
    const { target, proxy } = await setUp();
    const client = await connectClient(proxy.port, sockets);
    const server = await until(() => target.connections[0], "target connection");
    proxy.byteByByte(true);
    const message = "one byte at a time ✓";
    client.socket.write(message);
    const bytes = Buffer.byteLength(message);
    await until(() => Buffer.concat(server.chunks).length === bytes, "every byte delivered");
    expect(textOf(server)).toBe(message);
    expect(server.chunks.every((chunk) => chunk.length === 1)).toBe(true);
    expect(server.chunks.length).toBe(bytes);
  });

  it("pauseReading(true) stops reading from the client; false delivers everything in order", async () => {
    const { target, proxy } = await setUp();
    const client = await connectClient(proxy.port, sockets);
    const server = await until(() => target.connections[0], "target connection");
    proxy.pauseReading(true);
    client.socket.write("held ");
    client.socket.write("back");
    await letTimePass(100); // on purpose: no byte may reach the target while reading is paused
    expect(textOf(server)).toBe("");
    // The other direction still flows.
    server.socket.write("down");
    await until(() => textOf(client) === "down", "target → client while paused");
    // A connection accepted while paused is paused too.
    const late = await connectClient(proxy.port, sockets);
    late.socket.write("late");
    const lateServer = await until(() => target.connections[1], "second target connection");
    await letTimePass(50); // on purpose: no byte may reach the target while reading is paused
    expect(textOf(lateServer)).toBe("");
    proxy.pauseReading(false);
    await until(() => textOf(server) === "held back" && textOf(lateServer) === "late", "bytes after resume");
  });

  it("refuseNew(true) accepts and closes new connections at once without contacting the target; open ones keep working", async () => {
    const { target, proxy } = await setUp({ echo: true });
    const open = await connectClient(proxy.port, sockets);
    proxy.refuseNew(true);
    const refused = await connectClient(proxy.port, sockets);
    await until(() => refused.ended || refused.closed, "refused connection closed by the proxy");
    expect(textOf(refused)).toBe("");
    expect(target.connections).toHaveLength(1);
    expect(proxy.stats).toMatchObject({ acceptedConnections: 2, refusedConnections: 1, activeConnections: 1 });
    open.socket.write("still fine");
    await until(() => textOf(open) === "still fine", "open connection works");
    proxy.refuseNew(false);
    const accepted = await connectClient(proxy.port, sockets);
    accepted.socket.write("in");
    await until(() => textOf(accepted) === "in", "accepted again");
  });

  it("clearFaults() turns every fault off", async () => {
    const { proxy } = await setUp({ echo: true });
    proxy.latency(500);
    proxy.byteByByte(true);
    proxy.pauseReading(true);
    proxy.refuseNew(true);
    proxy.blackhole(true);
    proxy.clearFaults();
    const client = await connectClient(proxy.port, sockets);
    const started = Date.now();
    client.socket.write("clear");
    await until(() => textOf(client) === "clear", "echo with no faults");
    expect(Date.now() - started).toBeLessThan(scaled(200));
  });

  it("resets the client when the target refuses the connection", async () => {
    const { target, proxy } = await setUp();
    await target.close();
    const client = await connectClient(proxy.port, sockets);
    await until(() => client.closed, "client closed");
    expect(client.errorCode).toBe("ECONNRESET");
  });

  it("close() destroys open connections, stops listening, and is idempotent", async () => {
    const { proxy } = await setUp();
    const client = await connectClient(proxy.port, sockets);
    const port = proxy.port;
    await Promise.all([proxy.close(), proxy.close()]);
    await until(() => client.ended || client.closed, "client closed by close()");
    const after = await connectClient(port, sockets);
    expect(after.errorCode).toBe("ECONNREFUSED");
  });

  it("refuses a non-loopback interface and a bad target", async () => {
    await expect(startFaultProxy({ target: { host: "127.0.0.1", port: 1 }, host: "0.0.0.0" })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
    });
    await expect(startFaultProxy({ target: { host: "127.0.0.1", port: 0 } })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    await expect(startFaultProxy({ target: { host: "", port: 80 } })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
  });

  it("carries a WebSocket conversation byte by byte with latency (framing survives any segmentation)", async () => {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    server.on("connection", (socket) => socket.on("message", (data) => socket.send(`echo:${data.toString()}`)));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          for (const client of server.clients) client.terminate();
          server.close(() => resolve());
        }),
    );
    proxy = await startFaultProxy({ target: { host: "127.0.0.1", port: (server.address() as { port: number }).port } });
    proxy.byteByByte(true);
    proxy.latency(5);
    const socket = new WebSocket(`ws://127.0.0.1:${proxy.port}/`);
    cleanups.push(() => socket.terminate());
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    const replies: string[] = [];
    socket.on("message", (data) => replies.push(data.toString()));
    const big = "x".repeat(2_000);
    socket.send("a");
    socket.send(big);
    await until(() => replies.length === 2, "two echoes", 10_000);
    expect(replies).toEqual(["echo:a", `echo:${big}`]);
  });
});
