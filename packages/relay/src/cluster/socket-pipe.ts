/**
 * Hands a WebSocket upgrade to the node that holds its environment (docs/relay-cluster.md
 * "Routing"): the request as it arrived — with a hop header naming this node, so the holder never
 * pipes it on — then the bytes both ways, untouched. The client's WebSocket ends at the holder;
 * this node only copies bytes, so every rule (keys, tenants, seq, acks) stays the holder's.
 */
import type { IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { unrefTimer, type Timers } from "toolrelay/protocol";

/** The header a piped upgrade carries: the node that piped it. */
export const HOP_HEADER = "x-toolrelay-hop";

/** How long the holder may take to send its first byte before both sides are cut (a frozen holder). */
export const PIPE_FIRST_BYTE_TIMEOUT_MS = 5_000;

function parseAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(":");
  const host = address.slice(0, at).replace(/^\[|\]$/g, "");
  return { host, port: Number(address.slice(at + 1)) };
}

/** The request head as it arrived, plus the hop header. */
function requestHead(request: IncomingMessage, nodeId: string): string {
  const lines = [`${request.method ?? "GET"} ${request.url ?? "/"} HTTP/${request.httpVersion}`];
  const raw = request.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    if (raw[index]!.toLowerCase() === HOP_HEADER) continue;
    lines.push(`${raw[index]}: ${raw[index + 1]}`);
  }
  lines.push(`${HOP_HEADER}: ${nodeId}`);
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/**
 * Pipes `socket` (an upgrade this node read) to `address`. Resolves `"piped"` once the holder
 * accepted the TCP connection (from then on the pipe runs by itself), or `"unreachable"` when it
 * could not be reached — nothing was written to the client then, so the caller may route again.
 */
export function pipeUpgrade(
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  target: { address: string; nodeId: string; timers: Timers },
): Promise<"piped" | "unreachable"> {
  const { address, nodeId, timers } = target;
  const { host, port } = parseAddress(address);
  return new Promise((resolve) => {
    if (socket.destroyed) {
      resolve("piped");
      return;
    }
    const upstream: Socket = connect({ host, port });
    let connected = false;
    const firstByte = timers.setTimeout(() => {
      upstream.destroy();
      socket.destroy();
    }, PIPE_FIRST_BYTE_TIMEOUT_MS);
    unrefTimer(firstByte);
    const stopTimer = () => timers.clearTimeout(firstByte);
    upstream.once("data", stopTimer);
    upstream.on("error", () => {
      stopTimer();
      if (!connected) resolve("unreachable");
      else socket.destroy();
    });
    upstream.once("connect", () => {
      connected = true;
      upstream.setNoDelay(true);
      upstream.write(requestHead(request, nodeId));
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
      resolve("piped");
    });
    upstream.once("close", () => {
      stopTimer();
      if (connected) socket.destroy();
    });
    socket.on("error", () => upstream.destroy());
    socket.once("close", () => upstream.destroy());
  });
}
