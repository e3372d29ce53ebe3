/**
 * The links write a tick's answers together: the first at once, the rest of the tick in one go
 * (docs/performance.md: under load the per-answer `writev` was most of the client's time). Real
 * sockets on loopback; the client's TCP stream is only observed (its write calls counted).
 */
import { createServer, Socket, type Server } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { openLinkSockets, writeText, type OpenedLinkSockets } from "../../packages/toolrelay/src/transport/link-sockets.js";
import { LocalLink } from "../../packages/toolrelay/src/transport/local-link.js";
import { TickWriteBatch, beforeWrite } from "../../packages/toolrelay/src/transport/tick-write-batch.js";
import { until } from "../support/wait.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A ws server whose sockets are kept; `received` lists every message in arrival order. */
async function startServer(): Promise<{ url: string; sockets: WebSocket[]; received: string[] }> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  const sockets: WebSocket[] = [];
  const received: string[] = [];
  wss.on("connection", (socket) => {
    sockets.push(socket);
    socket.on("message", (data) => received.push(data.toString()));
  });
  cleanups.push(() => new Promise<void>((resolve) => wss.close(() => resolve())));
  cleanups.push(() => {
    for (const socket of sockets) socket.terminate();
  });
  return { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`, sockets, received };
}

/** A `ws` class that keeps its instances (to observe their TCP streams). */
function keptWebSocketClass(): { WebSocket: typeof WebSocket; instances: WebSocket[] } {
  const instances: WebSocket[] = [];
  class Kept extends WebSocket {
    constructor(...args: ConstructorParameters<typeof WebSocket>) {
      super(...args);
      instances.push(this);
    }
  }
  return { WebSocket: Kept as unknown as typeof WebSocket, instances };
}

/** Count the write calls that reach the stream's implementation (one per `writev` or `write` system call). */
function countWrites(stream: Socket): { writes: number; chunksIn: number } {
  const counts = { writes: 0, chunksIn: 0 };
  const target = stream as unknown as { _writev: (...args: unknown[]) => void; _write: (...args: unknown[]) => void };
  const writev = target._writev.bind(stream);
  const write = target._write.bind(stream);
  target._writev = (...args) => {
    counts.writes++;
    writev(...args);
  };
  target._write = (...args) => {
    counts.writes++;
    write(...args);
  };
  stream.on("data", () => counts.chunksIn++);
  return counts;
}

function request(index: number): string {
  return JSON.stringify({
    type: "external_tool_call_request",
    request_id: `external-tool-${index}`,
    tool_call_id: `call_${index}`,
    tool_name: "echo",
    input: {},
  });
}

describe("the writes of a tick leave together", () => {
  it("40 requests in one chunk: 40 answers, in order, in at most two writes per chunk that came in", async () => {
    const server = await startServer();
    const kept = keptWebSocketClass();
    const link = new LocalLink({ url: server.url, pingIntervalMs: 0, WebSocket: kept.WebSocket });
    cleanups.push(() => link.close());
    link.on("frame", (frame) => {
      if (frame.type === "external_tool_call_request") {
        link.send({
          type: "external_tool_call_response",
          request_id: frame.request_id,
          result: { content: [{ type: "text", text: "ok" }] },
        });
      }
    });
    await link.connect();
    await until(() => server.sockets.length === 1, "the server to accept the link");
    const counts = countWrites((kept.instances[0] as unknown as { _socket: Socket })._socket);

    // 40 frames in one TCP write from the runtime side (one `send` each, corked there).
    const runtimeStream = (server.sockets[0] as unknown as { _socket: Socket })._socket;
    runtimeStream.cork();
    for (let index = 0; index < 40; index++) server.sockets[0]!.send(request(index));
    runtimeStream.uncork();

    await until(
      () => server.received.length === 40,
      () => `40 answers (${server.received.length} so far)`,
    );
    expect(server.received.map((text) => JSON.parse(text).request_id)).toEqual(
      Array.from({ length: 40 }, (_, index) => `external-tool-${index}`),
    );
    expect(counts.chunksIn).toBeGreaterThanOrEqual(1);
    // Per chunk: its first answer at once, the others together when the tick ends.
    expect(counts.writes).toBeLessThanOrEqual(2 * counts.chunksIn);
  });

  it("an answer written in a later tick (an async tool) goes out at once: nothing corked or queued after its send", async () => {
    const server = await startServer();
    const kept = keptWebSocketClass();
    const link = new LocalLink({ url: server.url, pingIntervalMs: 0, WebSocket: kept.WebSocket });
    cleanups.push(() => link.close());
    let corkedWhenAnswered: number | undefined;
    const stream = () => (kept.instances[0] as unknown as { _socket: Socket })._socket;
    link.on("frame", (frame) => {
      if (frame.type !== "external_tool_call_request") return;
      setImmediate(() => {
        link.send({ type: "external_tool_call_response", request_id: frame.request_id, error: "later" });
        corkedWhenAnswered = stream().writableCorked + stream().writableLength;
      });
    });
    await link.connect();
    await until(() => server.sockets.length === 1, "the server to accept the link");
    server.sockets[0]!.send(request(1));
    await until(() => server.received.length === 1, "the answer");
    expect(corkedWhenAnswered).toBe(0);
    expect(JSON.parse(server.received[0]!)).toMatchObject({ request_id: "external-tool-1", error: "later" });
  });

  it("a listener that throws after two answers still releases the second, held for its tick", async () => {
    const server = await startServer();
    const kept = keptWebSocketClass();
    const link = new LocalLink({ url: server.url, pingIntervalMs: 0, WebSocket: kept.WebSocket });
    cleanups.push(() => link.close());
    const errors: string[] = [];
    link.on("error", (error) => errors.push(error.message));
    let corkedAfterSecond: number | undefined;
    link.on("frame", (frame) => {
      if (frame.type !== "external_tool_call_request") return;
      link.send({ type: "external_tool_call_response", request_id: frame.request_id, error: "first" });
      link.send({ type: "external_tool_call_response", request_id: frame.request_id, error: "second" });
      corkedAfterSecond = (kept.instances[0] as unknown as { _socket: Socket })._socket.writableCorked;
      throw new Error("listener bug");
    });
    await link.connect();
    await until(() => server.sockets.length === 1, "the server to accept the link");
    server.sockets[0]!.send(request(2));
    await until(() => server.received.length === 2, "both answers");
    expect(corkedAfterSecond).toBe(1);
    expect(errors).toEqual(["a link frame listener threw: Error: listener bug"]);
    expect(server.received.map((text) => JSON.parse(text).error)).toEqual(["first", "second"]);
    expect((kept.instances[0] as unknown as { _socket: Socket })._socket.writableCorked).toBe(0);
  });

  it("cloud: each status socket batches its own writes (writeText), acks and answers alike", async () => {
    const server = await startServer();
    let opened: OpenedLinkSockets<"control" | "stream"> | undefined;
    await openLinkSockets({
      channels: ["control", "stream"],
      urls: { control: server.url, stream: server.url },
      headers: {},
      onOpen: (sockets) => {
        opened = sockets;
      },
      timers: systemTimers,
      secrets: [],
    });
    const pair = opened!.sockets;
    cleanups.push(() => {
      pair.control.terminate();
      pair.stream.terminate();
    });
    const streams = [pair.control, pair.stream].map((socket) => (socket as unknown as { _socket: Socket })._socket);
    const corked: number[][] = [];
    for (const channel of ["control", "stream"] as const) {
      expect(opened!.takeEarly(channel)).toEqual([]);
      pair[channel].on("message", (data) => {
        const text = data.toString();
        writeText(pair.control, `control answers ${channel}: ${text}`);
        writeText(pair.stream, `stream answers ${channel}: ${text}`);
        corked.push(streams.map((stream) => stream.writableCorked));
        writeText(pair.control, `control again ${channel}: ${text}`);
        corked.push(streams.map((stream) => stream.writableCorked));
      });
    }
    await until(() => server.sockets.length === 2, "both sockets");
    server.sockets[0]!.send("one");
    await until(() => server.received.length === 3, "three answers");
    // Each socket's first write of the tick went out at once; control's second was held.
    expect(corked).toEqual([
      [0, 0],
      [1, 0],
    ]);
    expect(streams.map((stream) => stream.writableCorked)).toEqual([0, 0]);
    // Which server socket is which channel is the accept order's business: the answers name it.
    const channel = server.received[0]!.split(" ")[2]!.replace(":", "");
    expect(server.received.sort()).toEqual(
      [`control again ${channel}: one`, `control answers ${channel}: one`, `stream answers ${channel}: one`].sort(),
    );
  });

  it("a socket without a corkable TCP stream is left alone", () => {
    const batch = new TickWriteBatch({} as WebSocket);
    expect(() => {
      batch.beforeWrite();
      batch.beforeWrite();
    }).not.toThrow();
    const plain = new TickWriteBatch({ _socket: { cork: 1 } } as unknown as WebSocket);
    expect(() => {
      plain.beforeWrite();
      plain.beforeWrite();
    }).not.toThrow();
  });

  it("the first write of a tick is not held, the second corks once, the tick's end uncorks; the next tick starts over", async () => {
    const server: Server = createServer((socket) => socket.resume());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const client = await new Promise<Socket>((resolve) => {
      const socket = new Socket();
      socket.connect((server.address() as AddressInfo).port, "127.0.0.1", () => resolve(socket));
    });
    cleanups.push(() => void client.destroy());
    const socket = { _socket: client } as unknown as WebSocket;
    for (let tick = 0; tick < 2; tick++) {
      beforeWrite(socket);
      expect(client.writableCorked).toBe(0);
      beforeWrite(socket);
      beforeWrite(socket);
      expect(client.writableCorked).toBe(1);
      await new Promise<void>((resolve) => process.nextTick(resolve));
      expect(client.writableCorked).toBe(0);
    }
  });
});
