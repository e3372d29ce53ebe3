/**
 * Raw HTTP upgrade requests over `node:net`, for handshakes no WebSocket client
 * would send: duplicate headers, a foreign `Host`, an `Origin`, a token in the
 * query string, and a WebSocket frame written in the same TCP write as the
 * upgrade request (so a server that reads the frame before deciding would be
 * caught processing it).
 */
import { randomBytes } from "node:crypto";
import { connect } from "node:net";

export interface RawUpgradeRequest {
  port: number;
  /** Request target, e.g. `/ws?token=x`. */
  path: string;
  /** Header lines in order; duplicates allowed. `Host` is added first unless `host` is `null`. */
  headers?: ReadonlyArray<readonly [string, string]>;
  /** `Host` header value. Default `127.0.0.1:<port>`; `null` sends none. */
  host?: string | null;
  /** Bytes written in the same `write` as the request (e.g. a masked WebSocket frame). */
  trailer?: Buffer;
  /** How long to collect the answer after the status line arrived, in ms. Default 150. */
  settleMs?: number;
  /** Deadline for the whole exchange, in ms. Default 3_000. */
  timeoutMs?: number;
}

export interface RawUpgradeAnswer {
  /** HTTP status of the answer (101 for an accepted upgrade); 0 when none arrived. */
  status: number;
  /** The full answer text (head and body, WebSocket bytes as latin1). */
  text: string;
  /** True when the server closed the connection. */
  closedByServer: boolean;
}

/** A WebSocket key for a raw handshake. */
export function webSocketKey(): string {
  return randomBytes(16).toString("base64");
}

/** The standard upgrade headers (without Host / auth). */
export function upgradeHeaders(): Array<[string, string]> {
  return [
    ["Connection", "Upgrade"],
    ["Upgrade", "websocket"],
    ["Sec-WebSocket-Version", "13"],
    ["Sec-WebSocket-Key", webSocketKey()],
  ];
}

/** One masked client→server text frame (RFC 6455 §5.2), for payloads under 64 KiB. */
export function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text, "utf8");
  if (payload.length >= 65_536) throw new Error("maskedTextFrame: payload too large for this helper");
  const mask = randomBytes(4);
  const head =
    payload.length < 126
      ? Buffer.from([0x81, 0x80 | payload.length])
      : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  const masked = Buffer.alloc(payload.length);
  for (let index = 0; index < payload.length; index++) masked[index] = payload[index]! ^ mask[index % 4]!;
  return Buffer.concat([head, mask, masked]);
}

/** Send one raw upgrade request and collect the answer. Always destroys the socket before resolving. */
export function rawUpgrade(request: RawUpgradeRequest): Promise<RawUpgradeAnswer> {
  const host = request.host === undefined ? `127.0.0.1:${request.port}` : request.host;
  const lines = [`GET ${request.path} HTTP/1.1`];
  if (host !== null) lines.push(`Host: ${host}`);
  for (const [name, value] of request.headers ?? upgradeHeaders()) lines.push(`${name}: ${value}`);
  const head = Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
  const bytes = request.trailer ? Buffer.concat([head, request.trailer]) : head;
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port: request.port });
    const chunks: Buffer[] = [];
    let closedByServer = false;
    let settleTimer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      clearTimeout(settleTimer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString("latin1");
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ status: match ? Number(match[1]) : 0, text, closedByServer });
    };
    const deadline = setTimeout(() => {
      if (chunks.length === 0) {
        done = true;
        socket.destroy();
        reject(new Error(`no answer to the raw upgrade of ${request.path} within ${request.timeoutMs ?? 3_000} ms`));
      } else finish();
    }, request.timeoutMs ?? 3_000);
    socket.on("connect", () => socket.write(bytes));
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      settleTimer ??= setTimeout(finish, request.settleMs ?? 150);
    });
    socket.on("end", () => {
      closedByServer = true;
    });
    socket.on("close", () => {
      closedByServer = true;
      if (chunks.length > 0) finish();
    });
    socket.on("error", () => undefined);
  });
}
