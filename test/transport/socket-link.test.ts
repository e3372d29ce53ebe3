/**
 * The one link base (socket-link.ts) on both links: what the local and the cloud link share is
 * written once, so each behaviour here holds for both, against real sockets on loopback (a `ws`
 * server standing in for the app-server, the fake status relay for the cloud).
 */
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import type { ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import { CloudLink } from "../../packages/toolrelay/src/transport/cloud-link.js";
import { LocalLink } from "../../packages/toolrelay/src/transport/local-link.js";
import { FakeStatusRelay } from "./cloud-fake-relay.js";
import { letTimePass, until } from "../support/wait.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One link under test, and how its peer writes to it and sees what it wrote. */
interface LinkUnderTest {
  /** The base's channel type is invariant, so the two links are named, not `SocketLink<string>`. */
  link: LocalLink | CloudLink;
  /** The channel whose socket the peer writes on. */
  channel: string;
  /** Write on the peer's newest socket (of `channel`). */
  write(data: string | Buffer, binary?: boolean): void;
  /** Close the peer's newest socket (of `channel`). */
  drop(): void;
  /** Connections the peer accepted so far. */
  connections(): number;
}

async function localLink(options: { maxPayload?: number } = {}): Promise<LinkUnderTest> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const sockets: WebSocket[] = [];
  server.on("connection", (socket) => sockets.push(socket));
  const link = new LocalLink({
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`,
    pingIntervalMs: 0,
    backoff: { initialDelayMs: 10, maxDelayMs: 50 },
    ...options,
  });
  cleanups.push(async () => {
    await link.close();
    for (const socket of sockets) socket.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    link,
    channel: "app-server",
    write: (data, binary = false) => sockets.at(-1)!.send(data, { binary }),
    drop: () => sockets.at(-1)!.close(1012, "restarting"),
    connections: () => sockets.length,
  };
}

async function cloudLink(options: { maxPayload?: number } = {}): Promise<LinkUnderTest> {
  const relay = await FakeStatusRelay.start();
  const link = new CloudLink({
    connectionId: "conn-1",
    apiKey: "test-key",
    baseUrl: relay.baseUrl,
    runtime: { agentId: "agent-1", conversationId: "conv-1" },
    pingIntervalMs: 0,
    backoff: { initialDelayMs: 10, maxDelayMs: 50 },
    ...options,
  });
  cleanups.push(async () => {
    await link.close();
    await relay.stop();
  });
  return {
    link,
    channel: "stream",
    write: (data, binary = false) => relay.current("stream").socket.send(data, { binary }),
    drop: () => relay.current("stream").socket.close(1012, "restarting"),
    connections: () => relay.controlConnections,
  };
}

function record(link: LocalLink | CloudLink) {
  const seen = { errors: [] as ToolrelayError[], frames: [] as string[], invalid: [] as string[], reconnects: 0 };
  link.on("error", (error) => seen.errors.push(error));
  link.on("frame", (frame) => seen.frames.push(frame.type));
  link.on("invalid-frame", (error) => seen.invalid.push(error));
  link.on("reconnected", () => seen.reconnects++);
  return seen;
}

describe.each([
  ["local", localLink],
  ["cloud", cloudLink],
] as const)("the link base, on the %s link", (_name, start) => {
  it("a state listener that throws during a drop is reported, and the link still reconnects", async () => {
    const subject = await start();
    const seen = record(subject.link);
    await subject.link.connect();
    subject.link.on("state", (state) => {
      if (state === "reconnecting") throw new Error("state listener bug");
    });
    subject.drop();
    await until(() => seen.reconnects === 1, "the reconnect", 5_000);
    expect(subject.link.state).toBe("open");
    expect(subject.link.epoch).toBe(2);
    expect(seen.errors.map((error) => `${error.code}: ${error.message}`)).toContainEqual(
      "LISTENER_FAILED: a link event listener threw: Error: state listener bug",
    );
  });

  it("a drop's error names the socket's own error: an oversize frame (1009)", async () => {
    const subject = await start({ maxPayload: 1_024 });
    const seen = record(subject.link);
    await subject.link.connect();
    subject.write("x".repeat(2_048));
    await until(() => seen.reconnects === 1, "the reconnect", 5_000);
    const dropped = seen.errors.find((error) => error.code === "CONNECTION_CLOSED");
    expect(dropped?.message).toMatch(
      new RegExp(`link dropped: ${subject.channel} socket closed \\(code 100[69]: .*Max payload size exceeded`),
    );
  });

  it("reports a binary frame as invalid, naming its socket, hands a JSON pong to the heartbeat (not on), and stays open", async () => {
    const subject = await start();
    const seen = record(subject.link);
    await subject.link.connect();
    subject.write(Buffer.from([1, 2, 3]), true);
    subject.write(JSON.stringify({ type: "pong" }));
    subject.write(JSON.stringify({ type: "update_queue", queue: [] }));
    await until(() => seen.frames.length === 1, "the frame after them");
    await letTimePass(30); // on purpose: nothing more may arrive within this window
    expect(seen.invalid).toEqual([`binary frame on the ${subject.channel} socket`]);
    expect(seen.frames).toEqual(["update_queue"]);
    expect(subject.link.state).toBe("open");
    expect(subject.connections()).toBe(1);
  });
});
