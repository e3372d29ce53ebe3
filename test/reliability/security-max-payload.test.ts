/**
 * An explicit `maxPayload` on every socket we open or accept: an oversize frame
 * closes that socket with 1009 (Message Too Big). Checked on the SDK's local
 * link, the SDK's cloud link (control socket), the scripted runtime and the
 * relay (SDK status and listener sockets) — once with a small configured cap,
 * once at the 16 MiB default (+1 byte; `ws` alone would allow 100 MiB). A frame
 * under the cap passes (control case).
 */
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { startRelay } from "../../packages/relay/src/index.js";
import { startScriptedRuntime } from "../../packages/toolrelay/src/testing/index.js";
import { CloudLink } from "../../packages/toolrelay/src/transport/cloud-link.js";
import { LocalLink } from "../../packages/toolrelay/src/transport/local-link.js";
import { SingleSocketListener } from "./support-security/relay-listener.js";

const DEFAULT_CAP = 16 * 1024 * 1024;
const SMALL_CAP = 64 * 1024;
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A text payload of exactly `bytes` bytes. */
const payload = (bytes: number): string => "a".repeat(bytes);

/** Resolves with the close code of `socket` (deadline `ms`). */
function closeCode(socket: WebSocket, ms = 5_000): Promise<number> {
  return new Promise((resolve, reject) => {
    if (socket.readyState === WebSocket.CLOSED) return reject(new Error("socket already closed"));
    const timer = setTimeout(() => reject(new Error(`socket not closed within ${ms} ms`)), ms);
    socket.once("close", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** Resolves once `socket` is open (deadline 3 s). */
function opened(socket: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("socket not open within 3 s")), 3_000);
    socket.once("open", () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** A raw ws server on loopback that hands the test each accepted socket (and its request URL). */
async function rawServer(): Promise<{ url: string; next(): Promise<{ socket: WebSocket; path: string }> }> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, maxPayload: 64 * 1024 * 1024 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const queue: Array<{ socket: WebSocket; path: string }> = [];
  const waiting: Array<(entry: { socket: WebSocket; path: string }) => void> = [];
  server.on("connection", (socket, request) => {
    socket.on("error", () => undefined);
    const entry = { socket, path: request.url ?? "" };
    const waiter = waiting.shift();
    if (waiter) waiter(entry);
    else queue.push(entry);
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  );
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    next: () => {
      const queued = queue.shift();
      if (queued) return Promise.resolve(queued);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no connection within 3 s")), 3_000);
        waiting.push((entry) => {
          clearTimeout(timer);
          resolve(entry);
        });
      });
    },
  };
}

describe("SDK local link", () => {
  it.each([
    ["a configured cap", SMALL_CAP],
    ["the 16 MiB default", undefined],
  ] as const)("closes with 1009 on a frame over %s; a frame under it passes", async (_name, cap) => {
    const server = await rawServer();
    const link = new LocalLink({ url: `${server.url}/ws`, reconnect: false, pingIntervalMs: 0, ...(cap ? { maxPayload: cap } : {}) });
    const invalid: string[] = [];
    link.on("error", () => undefined);
    link.on("invalid-frame", (error) => invalid.push(error));
    cleanups.push(() => link.close());
    await link.connect();
    const { socket } = await server.next();
    const limit = cap ?? DEFAULT_CAP;
    socket.send(payload(Math.min(limit, 1024 * 1024))); // at or under the cap: read (an invalid frame), socket stays
    await expect.poll(() => invalid.length, { timeout: 3_000 }).toBe(1);
    expect(link.state).toBe("open");
    const code = closeCode(socket);
    socket.send(payload(limit + 1));
    expect(await code).toBe(1009);
  });
});

describe("SDK cloud link", () => {
  it.each([
    ["a configured cap", SMALL_CAP],
    ["the 16 MiB default", undefined],
  ] as const)("closes the control socket with 1009 on a frame over %s", async (_name, cap) => {
    const server = await rawServer();
    const link = new CloudLink({
      connectionId: "env-payload",
      apiKey: "cloud-key",
      baseUrl: server.url.replace("ws:", "http:"),
      reconnect: false,
      pingIntervalMs: 0,
      ...(cap ? { maxPayload: cap } : {}),
    });
    link.on("error", () => undefined);
    cleanups.push(() => link.close());
    const connecting = link.connect();
    const first = await server.next();
    const second = await server.next();
    await connecting;
    const control = first.path.includes("channel=control") ? first.socket : second.socket;
    const code = closeCode(control);
    control.send(payload((cap ?? DEFAULT_CAP) + 1));
    expect(await code).toBe(1009);
  });
});

describe("scripted runtime", () => {
  it.each([
    ["a configured cap", SMALL_CAP],
    ["the 16 MiB default", undefined],
  ] as const)("closes a client socket with 1009 on a frame over %s", async (_name, cap) => {
    const runtime = await startScriptedRuntime({
      script: () => undefined,
      heartbeatIntervalMs: 0,
      ...(cap ? { maxPayloadBytes: cap } : {}),
    });
    cleanups.push(() => runtime.close());
    const socket = new WebSocket(runtime.url);
    socket.on("error", () => undefined);
    await opened(socket);
    const limit = cap ?? DEFAULT_CAP;
    socket.send(payload(Math.min(limit, 1024 * 1024)));
    await expect.poll(() => runtime.frames.length, { timeout: 3_000 }).toBe(1);
    const code = closeCode(socket);
    socket.send(payload(limit + 1));
    expect(await code).toBe(1009);
  });
});

describe("relay", () => {
  it.each([
    ["a configured cap", SMALL_CAP],
    ["the 16 MiB default", undefined],
  ] as const)("closes an SDK status socket and a listener socket with 1009 on a frame over %s", async (_name, cap) => {
    const relay = await startRelay({
      listenerMode: "single",
      heartbeatIntervalMs: 0,
      ...(cap ? { maxSdkFrameBytes: cap, maxListenerFrameBytes: cap } : {}),
    });
    cleanups.push(() => relay.close());
    const listener = await SingleSocketListener.start(relay.httpUrl, undefined);
    cleanups.push(() => listener.terminate());
    const limit = cap ?? DEFAULT_CAP;
    const sdk = new WebSocket(relay.statusUrl(listener.environment.connectionId, { channel: "control", sessionId: "payload" }));
    sdk.on("error", () => undefined);
    await opened(sdk);
    const sdkClosed = closeCode(sdk);
    sdk.send(payload(limit + 1));
    expect(await sdkClosed).toBe(1009);
    const listenerClosed = closeCode(listener.socket!);
    listener.socket!.send(payload(limit + 1));
    expect(await listenerClosed).toBe(1009);
  });
});
