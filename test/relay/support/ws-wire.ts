/**
 * The WebSocket wire format at its simplest, for load clients that must cost (almost) nothing:
 * a raw upgrade over `node:net`, client frames masked ahead of time, and a counter of the server
 * frames in a byte stream. RFC 6455 §5.2.
 */
import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";

/** One masked client→server text frame (any length). */
export function maskedFrame(payload: Buffer): Buffer {
  const mask = randomBytes(4);
  let head: Buffer;
  if (payload.length < 126) head = Buffer.from([0x81, 0x80 | payload.length]);
  else if (payload.length < 65_536) head = Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  else {
    head = Buffer.alloc(10);
    head[0] = 0x81;
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(payload.length), 2);
  }
  const masked = Buffer.allocUnsafe(payload.length);
  for (let index = 0; index < payload.length; index++) masked[index] = payload[index]! ^ mask[index & 3]!;
  return Buffer.concat([head, mask, masked]);
}

/**
 * Opens a raw WebSocket connection: resolves with the socket once the relay answered 101 (any
 * bytes after the answer are handed to `onData`), rejects with the status line otherwise.
 */
export function rawWebSocket(options: {
  port: number;
  path: string;
  apiKey: string;
  localAddress?: string;
  onData?: (chunk: Buffer) => void;
}): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port: options.port, localAddress: options.localAddress });
    let head = Buffer.alloc(0);
    let upgraded = false;
    socket.on("error", (error) => {
      if (!upgraded) reject(error);
    });
    socket.on("data", (chunk: Buffer) => {
      if (upgraded) {
        options.onData?.(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      const status = head.toString("latin1", 0, head.indexOf("\r\n"));
      if (!status.startsWith("HTTP/1.1 101")) {
        socket.destroy();
        reject(new Error(`upgrade refused: ${status}`));
        return;
      }
      upgraded = true;
      resolve(socket);
      if (head.length > end + 4) options.onData?.(head.subarray(end + 4));
    });
    socket.once("connect", () => {
      socket.write(
        [
          `GET ${options.path} HTTP/1.1`,
          `Host: 127.0.0.1:${options.port}`,
          "Upgrade: websocket",
          "Connection: Upgrade",
          "Sec-WebSocket-Version: 13",
          `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}`,
          `Authorization: Bearer ${options.apiKey}`,
          "",
          "",
        ].join("\r\n"),
      );
    });
  });
}

/** Counts complete server→client data messages in a byte stream (unmasked frames, any fragmentation), skipping payloads without copying them. */
export class ServerFrameCounter {
  messages = 0;
  bytes = 0;
  /** Header bytes of the frame being read. */
  #header: number[] = [];
  /** Payload bytes still to skip, and whether that frame ends a data message. */
  #skip = 0;
  #endsMessage = false;

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    let offset = 0;
    while (offset < chunk.length) {
      if (this.#skip > 0) {
        const taken = Math.min(this.#skip, chunk.length - offset);
        this.#skip -= taken;
        offset += taken;
        if (this.#skip === 0 && this.#endsMessage) this.messages++;
        continue;
      }
      this.#header.push(chunk[offset++]!);
      const header = this.#header;
      const size = header.length < 2 ? 2 : (header[1]! & 0x7f) === 126 ? 4 : (header[1]! & 0x7f) === 127 ? 10 : 2;
      if (header.length < size) continue;
      const bytes = Buffer.from(header);
      const length = size === 2 ? header[1]! & 0x7f : size === 4 ? bytes.readUInt16BE(2) : Number(bytes.readBigUInt64BE(2));
      this.#endsMessage = (header[0]! & 0x80) !== 0 && (header[0]! & 0x0f) < 0x8;
      this.#header = [];
      this.#skip = length;
      if (length === 0 && this.#endsMessage) this.messages++;
    }
  }
}
