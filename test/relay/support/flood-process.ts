/**
 * The flooding tenant, in its own process (started by flood-harness.ts with IPC): it registers
 * an environment with its own key, holds a raw listener socket that reads and discards, opens a
 * raw SDK status socket bound to its runtime, and on `go` writes N pre-masked frames as fast as
 * TCP takes them. It costs almost no CPU itself, so what the victim sees is the relay's doing.
 * Reports `ready`, then `done` once its listener has received every frame the relay forwarded.
 */
import { request } from "node:http";
import type { Socket } from "node:net";
import { maskedFrame, rawWebSocket, ServerFrameCounter } from "./ws-wire.js";

interface FloodOrder {
  httpUrl: string;
  apiKey: string;
  frames: number;
  /** Bytes of padding in each frame (0: small frames of ~100 bytes). */
  padBytes: number;
}

function send(message: Record<string, unknown>): void {
  process.send?.(message);
}

function register(order: FloodOrder, deviceId: string): Promise<{ connectionId: string; wsUrl: string }> {
  const body = JSON.stringify({ deviceId, connectionName: "flood", metadata: {} });
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${order.httpUrl}/v1/environments/register`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${order.apiKey}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          if (response.statusCode !== 200) reject(new Error(`register: HTTP ${response.statusCode}`));
          else resolve(JSON.parse(Buffer.concat(chunks).toString()) as { connectionId: string; wsUrl: string });
        });
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

async function writeAll(socket: Socket, chunks: Buffer[]): Promise<void> {
  for (const chunk of chunks) {
    if (!socket.write(chunk)) await new Promise<void>((resolve) => socket.once("drain", () => resolve()));
  }
}

async function main(order: FloodOrder): Promise<void> {
  const port = Number(new URL(order.httpUrl).port);
  const deviceId = `flood-device-${process.pid}`;
  const { connectionId, wsUrl } = await register(order, deviceId);
  const counter = new ServerFrameCounter();
  const listenerPath = `${new URL(wsUrl).pathname}?deviceId=${deviceId}&connectionName=flood`;
  const listener = await rawWebSocket({ port, path: listenerPath, apiKey: order.apiKey, onData: (chunk) => counter.push(chunk) });
  const runtime = { agent_id: "flood-agent", conversation_id: "flood-conv" };
  const statusPath = (channel: string) =>
    `/v1/environments/${connectionId}/status/ws?channel=${channel}&sessionId=flood&agentId=${runtime.agent_id}&conversationId=${runtime.conversation_id}`;
  const control = await rawWebSocket({ port, path: statusPath("control"), apiKey: order.apiKey });
  const stream = await rawWebSocket({ port, path: statusPath("stream"), apiKey: order.apiKey });
  const pad = "f".repeat(order.padBytes);
  const perChunk = order.padBytes > 0 ? 1 : 1_000;
  const chunks: Buffer[] = [];
  for (let first = 0; first < order.frames; first += perChunk) {
    const frames: Buffer[] = [];
    for (let index = first; index < Math.min(order.frames, first + perChunk); index++) {
      frames.push(
        maskedFrame(Buffer.from(JSON.stringify({ type: "sync", runtime, recover_approvals: true, n: index, ...(pad ? { pad } : {}) }))),
      );
    }
    chunks.push(Buffer.concat(frames));
  }
  send({ type: "ready", connectionId });
  await new Promise<void>((resolve) => process.once("message", () => resolve()));
  const started = performance.now();
  await writeAll(control, chunks);
  const written = performance.now() - started;
  while (counter.messages < order.frames) await new Promise((resolve) => setTimeout(resolve, 5));
  send({ type: "done", writtenMs: written, forwardedMs: performance.now() - started, forwarded: counter.messages });
  for (const socket of [control, stream, listener]) socket.destroy();
}

process.once("message", (order: FloodOrder) => {
  main(order).catch((error: unknown) => {
    send({ type: "failed", error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  });
});
process.on("disconnect", () => process.exit(0));
