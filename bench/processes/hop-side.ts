/**
 * The middle hop of benchmark 5, in its own process: the reference relay
 * (`startRelay`, one-socket listener mode) and, for the baseline, a raw
 * two-hop forward — a `ws` server that, for every client socket, opens a socket
 * to the runtime side and pipes text frames both ways untouched (no parsing).
 */
import { pathToFileURL } from "node:url";
import { WebSocket, WebSocketServer, type RawData } from "ws";
import { serveParent } from "../harness/child-process.js";
import type * as RelayModule from "../harness/relay-entry.js";

import { RELAY_BENCH_KEY } from "./relay-bench-key.js";

const bundle = process.env.TOOLRELAY_BENCH_RELAY;
const { startRelay }: typeof RelayModule = bundle ? await import(pathToFileURL(bundle).href) : await import("../harness/relay-entry.js");

const upstreamUrl = process.argv[2];
if (!upstreamUrl) throw new Error("hop-side: pass the runtime side's URL");

const relay = await startRelay({ apiKeys: [RELAY_BENCH_KEY], listenerMode: "single", heartbeatIntervalMs: 0 });

const forward = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
forward.on("connection", (client) => {
  const upstream = new WebSocket(upstreamUrl, { perMessageDeflate: false });
  const queued: RawData[] = [];
  client.on("message", (data, isBinary) => {
    if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
    else queued.push(data);
  });
  upstream.on("open", () => {
    for (const data of queued.splice(0)) upstream.send(data, { binary: false });
  });
  upstream.on("message", (data, isBinary) => client.send(data, { binary: isBinary }));
  const closeBoth = () => {
    client.terminate();
    upstream.terminate();
  };
  client.on("close", closeBoth);
  upstream.on("close", closeBoth);
  client.on("error", () => undefined);
  upstream.on("error", () => undefined);
});
await new Promise<void>((resolve) => forward.once("listening", () => resolve()));

const parent = serveParent(async (cmd) => {
  if (cmd === "environments") return { environments: relay.environments() };
  throw new Error(`unknown command ${cmd}`);
});
const address = forward.address() as { port: number };
parent.ready({ relayHttpUrl: relay.httpUrl, forwardUrl: `ws://127.0.0.1:${address.port}/ws`, pid: process.pid });

process.on("SIGTERM", () => {
  for (const socket of forward.clients) socket.terminate();
  forward.close();
  void relay.close().finally(() => process.exit(0));
});
