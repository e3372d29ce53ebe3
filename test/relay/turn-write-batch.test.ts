/**
 * The writes of one scheduler turn leave together (packages/relay/src/turn-write-batch.ts): real
 * sockets on loopback, a real `ws` server; the raw TCP stream is corked from a turn's first write
 * to the turn's end, frames keep their order, and a slice that throws or a socket destroyed mid
 * turn never leaves a stream corked. A hold (frames routed after a key-value acknowledgement, in
 * cluster mode) corks until the next check phase, and a turn inside it lets the writes go.
 */
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { FairScheduler } from "../../packages/relay/src/fair-scheduler.js";
import { rememberRawSocket, TurnWriteBatch } from "../../packages/relay/src/turn-write-batch.js";

interface Pair {
  server: WebSocket;
  raw: Duplex;
  client: WebSocket;
  received: string[];
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function pair(): Promise<Pair> {
  const wss = new WebSocketServer({ noServer: true });
  const { createServer } = await import("node:http");
  const http = createServer();
  const accepted = new Promise<{ server: WebSocket; raw: Duplex }>((resolve) => {
    http.on("upgrade", (request, raw, head) => wss.handleUpgrade(request, raw, head, (server) => resolve({ server, raw })));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(http.address() as AddressInfo).port}`);
  const received: string[] = [];
  client.on("message", (data) => received.push(String(data)));
  const { server, raw } = await accepted;
  await new Promise<void>((resolve) => (client.readyState === WebSocket.OPEN ? resolve() : client.once("open", () => resolve())));
  closers.push(async () => {
    client.terminate();
    server.terminate();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });
  return { server, raw, client, received };
}

async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}

describe("TurnWriteBatch", () => {
  it("holds a socket's writes from the turn's first write to its end, then they arrive in order", async () => {
    const { server, raw, received } = await pair();
    rememberRawSocket(server, raw);
    const batch = new TurnWriteBatch();
    batch.begin();
    for (const text of ["one", "two", "three"]) {
      batch.beforeWrite(server);
      server.send(text);
    }
    expect(raw.writableCorked).toBe(1);
    batch.end();
    expect(raw.writableCorked).toBe(0);
    await until(() => received.length === 3);
    expect(received).toEqual(["one", "two", "three"]);
  });

  it("does not hold writes outside a turn, nor a socket it has no stream for", async () => {
    const first = await pair();
    const second = await pair();
    rememberRawSocket(first.server, first.raw);
    const batch = new TurnWriteBatch();
    batch.beforeWrite(first.server);
    expect(first.raw.writableCorked).toBe(0);
    batch.begin();
    batch.beforeWrite(second.server);
    expect(second.raw.writableCorked).toBe(0);
    batch.end();
  });

  it("a hold keeps the writes of continuations after one I/O callback together until setImmediate", async () => {
    const { server, raw, received } = await pair();
    rememberRawSocket(server, raw);
    const batch = new TurnWriteBatch();
    const corkedAtEachWrite: number[] = [];
    // Three promise continuations, as three acknowledgements read from one NATS socket resolve them.
    await Promise.all(
      ["one", "two", "three"].map(async (text) => {
        await Promise.resolve();
        batch.holdUntilImmediate();
        batch.beforeWrite(server);
        server.send(text);
        corkedAtEachWrite.push(raw.writableCorked);
      }),
    );
    expect(corkedAtEachWrite).toEqual([1, 1, 1]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(raw.writableCorked).toBe(0);
    await until(() => received.length === 3);
    expect(received).toEqual(["one", "two", "three"]);
  });

  it("a hold inside a turn changes nothing, and a turn inside a hold ends it", async () => {
    const { server, raw } = await pair();
    rememberRawSocket(server, raw);
    const batch = new TurnWriteBatch();
    batch.begin();
    batch.holdUntilImmediate();
    batch.beforeWrite(server);
    server.send("in the turn");
    batch.end();
    expect(raw.writableCorked).toBe(0);
    batch.holdUntilImmediate();
    batch.beforeWrite(server);
    batch.begin();
    batch.end();
    expect(raw.writableCorked).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(raw.writableCorked).toBe(0);
  });

  it("a socket destroyed during the turn is left alone at its end", async () => {
    const { server, raw } = await pair();
    rememberRawSocket(server, raw);
    const batch = new TurnWriteBatch();
    batch.begin();
    batch.beforeWrite(server);
    raw.destroy();
    expect(() => batch.end()).not.toThrow();
  });

  it("the scheduler ends the batch of a turn whose slice threw, and the next turn runs", async () => {
    const { server, raw, received } = await pair();
    rememberRawSocket(server, raw);
    const batch = new TurnWriteBatch();
    const errors: unknown[] = [];
    const scheduler = new FairScheduler({ brackets: batch, onError: (error) => errors.push(error) });
    scheduler.wake("tenant", {
      runSlice() {
        batch.beforeWrite(server);
        server.send("before the throw");
        throw new Error("slice failed");
      },
    });
    await until(() => errors.length === 1);
    expect(raw.writableCorked).toBe(0);
    await until(() => received.length === 1);
    expect(received).toEqual(["before the throw"]);
  });
});
