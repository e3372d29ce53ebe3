/**
 * The runtime side of the round-trip benchmarks, in its own process (as the
 * Letta Code app-server is in real use). A `ws` server on 127.0.0.1 that
 * answers `runtime_start` like the app-server does, labels each client by the
 * `client_info.name` of its `runtime_start`, and on command sends
 * `external_tool_call_request` frames to one client — one at a time
 * (`latency`) or with N in flight (`throughput`) — timing each until its
 * `external_tool_call_response` arrives. It can also dial out (`connect`) to be
 * the listener behind a relay or a raw forwarder. Latencies go back over IPC.
 */
import { WebSocket, WebSocketServer, type RawData } from "ws";
import { serveParent } from "../harness/child-process.js";

const AGENT_ID = "agent-bench";

interface Peer {
  socket: WebSocket;
  label: string;
  runtimeJson: string;
}

/** Socket a `runtime_start` arrived on, by client label. */
const peers = new Map<string, Peer>();
/** Callbacks waiting for a response, by request id. */
const waiting = new Map<string, (at: bigint) => void>();
let sequence = 0;

function onMessage(socket: WebSocket, data: RawData): void {
  const at = process.hrtime.bigint();
  const text = data.toString();
  let frame: Record<string, unknown>;
  try {
    frame = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return;
  }
  if (frame.type === "external_tool_call_response") {
    const done = waiting.get(frame.request_id as string);
    if (done) {
      waiting.delete(frame.request_id as string);
      done(at);
    }
    return;
  }
  if (frame.type === "runtime_start") {
    const clientInfo = frame.client_info as { name?: string } | undefined;
    const label = clientInfo?.name ?? "unnamed";
    const runtime = { agent_id: (frame.agent_id as string | undefined) ?? AGENT_ID, conversation_id: `conv-${label}` };
    peers.set(label, { socket, label, runtimeJson: JSON.stringify(runtime) });
    socket.send(JSON.stringify({ type: "runtime_start_response", request_id: frame.request_id, success: true, runtime }));
    return;
  }
  if (frame.type === "ping") socket.send(JSON.stringify({ type: "pong" }));
}

function attach(socket: WebSocket): void {
  socket.on("message", (data) => onMessage(socket, data));
  socket.on("error", () => undefined);
  socket.on("close", () => {
    for (const [label, peer] of peers) if (peer.socket === socket) peers.delete(label);
  });
}

function peer(label: string): Peer {
  const found = peers.get(label);
  if (!found || found.socket.readyState !== WebSocket.OPEN) throw new Error(`runtime side: no open client labelled ${label}`);
  return found;
}

/** Send one request to `target`; resolve with its round trip in µs. */
function roundTrip(target: Peer, toolName: string): Promise<number> {
  const n = ++sequence;
  const requestId = `external-tool-${n}`;
  const text = `{"type":"external_tool_call_request","request_id":"${requestId}","runtime":${target.runtimeJson},"tool_call_id":"call_${n}","tool_name":"${toolName}","input":{}}`;
  return new Promise<number>((resolve) => {
    const sentAt = process.hrtime.bigint();
    waiting.set(requestId, (at) => resolve(Number(at - sentAt) / 1000));
    target.socket.send(text);
  });
}

async function latency(label: string, iterations: number, toolName: string): Promise<Float64Array> {
  const target = peer(label);
  const samples = new Float64Array(iterations);
  for (let index = 0; index < iterations; index++) samples[index] = await roundTrip(target, toolName);
  return samples;
}

async function throughput(
  label: string,
  total: number,
  inFlight: number,
  toolName: string,
): Promise<{ elapsedMs: number; samples: Float64Array }> {
  const target = peer(label);
  const samples = new Float64Array(total);
  let started = 0;
  const startedAt = process.hrtime.bigint();
  await new Promise<void>((resolve) => {
    let finished = 0;
    const launch = (): void => {
      const index = started++;
      void roundTrip(target, toolName).then((micros) => {
        samples[index] = micros;
        finished++;
        if (started < total) launch();
        else if (finished === total) resolve();
      });
    };
    for (let index = 0; index < Math.min(inFlight, total); index++) launch();
  });
  return { elapsedMs: Number(process.hrtime.bigint() - startedAt) / 1e6, samples };
}

/** Send `count` requests to `label` without waiting (they are never expected to be answered before close). */
function flood(label: string, count: number, toolName: string): number {
  const target = peer(label);
  for (let index = 0; index < count; index++) {
    const n = ++sequence;
    target.socket.send(
      `{"type":"external_tool_call_request","request_id":"external-tool-${n}","runtime":${target.runtimeJson},"tool_call_id":"call_${n}","tool_name":"${toolName}","input":{}}`,
    );
  }
  return count;
}

const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
server.on("connection", (socket) => attach(socket));
const outgoing: WebSocket[] = [];

const parent = serveParent(async (cmd, message) => {
  const toolName = (message.toolName as string | undefined) ?? "noop";
  switch (cmd) {
    case "latency":
      return { samples: await latency(message.label as string, message.iterations as number, toolName) };
    case "throughput": {
      const result = await throughput(message.label as string, message.total as number, message.inFlight as number, toolName);
      return { elapsedMs: result.elapsedMs, samples: result.samples };
    }
    case "flood":
      return { sent: flood(message.label as string, message.count as number, toolName) };
    case "connect": {
      // Dial out as a listener (behind a relay or a raw forwarder).
      const socket = new WebSocket(message.url as string, {
        perMessageDeflate: false,
        headers: (message.headers as Record<string, string>) ?? {},
      });
      outgoing.push(socket);
      attach(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once("open", () => resolve());
        socket.once("error", reject);
      });
      return {};
    }
    case "registerRelay": {
      // Register as a Letta Code listener with the relay (one-socket mode) and connect.
      const httpUrl = message.httpUrl as string;
      const headers = { authorization: `Bearer ${message.apiKey as string}`, "content-type": "application/json" };
      const deviceId = `bench-device-${process.pid}`;
      const response = await fetch(`${httpUrl}/v1/environments/register`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          deviceId,
          connectionName: "toolrelay-bench",
          listenerInstanceId: "bench",
          metadata: { environmentMessageProtocol: "v2-input" },
        }),
      });
      if (response.status !== 200) throw new Error(`relay register: HTTP ${response.status}`);
      const answer = (await response.json()) as { connectionId: string; wsUrl: string };
      const url = new URL(answer.wsUrl);
      url.searchParams.set("deviceId", deviceId);
      url.searchParams.set("connectionName", "toolrelay-bench");
      const socket = new WebSocket(url.toString(), { perMessageDeflate: false, headers: { authorization: headers.authorization } });
      outgoing.push(socket);
      attach(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once("open", () => resolve());
        socket.once("error", reject);
      });
      return { connectionId: answer.connectionId };
    }
    case "labels":
      return { labels: [...peers.keys()] };
    default:
      throw new Error(`unknown command ${cmd}`);
  }
});

server.on("listening", () => {
  const address = server.address() as { port: number };
  parent.ready({ url: `ws://127.0.0.1:${address.port}/ws`, pid: process.pid });
});

process.on("SIGTERM", () => {
  for (const socket of outgoing) socket.terminate();
  for (const client of server.clients) client.terminate();
  server.close(() => process.exit(0));
});
