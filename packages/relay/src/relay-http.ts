/**
 * Small HTTP helpers of the relay: JSON answers, bounded body reading, refusing an upgrade, and
 * the close-code check (`ws` throws on codes a peer may not send).
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { parseJson } from "toolrelay/protocol";

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    // REST calls are rare (registration, listing): no idle keep-alive sockets to track or leak.
    connection: "close",
  });
  response.end(text);
}

export function sendError(response: ServerResponse, status: number, message: string): void {
  sendJson(response, status, { error: STATUS_CODES[status] ?? "Error", message });
}

/** Answers an upgrade request with a plain HTTP error and closes the socket. */
export function refuseUpgrade(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ error: STATUS_CODES[status] ?? "Error", message });
  socket.on("error", () => {});
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\n` +
      "Connection: close\r\n" +
      "Content-Type: application/json; charset=utf-8\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

export type BodyResult = { ok: true; value: unknown } | { ok: false; status: number; message: string };

/** Reads a JSON body of at most `maxBytes` (413 beyond, 400 when not JSON). An empty body reads as `{}`. */
export function readJsonBody(request: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: BodyResult): void => {
      if (done) return;
      done = true;
      resolve(result);
    };
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        finish({ ok: false, status: 413, message: `body larger than ${maxBytes} bytes` });
        request.resume();
        return;
      }
      if (!done) chunks.push(chunk);
    });
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      if (text.trim() === "") return finish({ ok: true, value: {} });
      const parsed = parseJson(text, 64);
      finish(parsed.ok ? { ok: true, value: parsed.value } : { ok: false, status: 400, message: "body is not valid JSON" });
    });
    request.on("error", () => finish({ ok: false, status: 400, message: "request body could not be read" }));
  });
}

/** Whether `code` may be sent in a close frame. */
export function isSendableCloseCode(code: number): boolean {
  return Number.isInteger(code) && ((code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999));
}

/** A close reason that fits in a close frame (123 bytes). */
export function closeReason(reason: string): string {
  let text = reason;
  while (Buffer.byteLength(text) > 123) text = text.slice(0, -1);
  return text;
}
