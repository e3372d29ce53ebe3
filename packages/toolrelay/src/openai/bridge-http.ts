/**
 * The HTTP edge of the bridge: who may call it (Bearer keys, compared in constant time; no
 * foreign `Host` header, against DNS rebinding; no browser `Origin` unless allowed), reading a
 * bounded JSON body, and writing JSON answers. Nothing here logs or echoes a key.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isLoopbackHost } from "../internal/loopback-host.js";
import { parseJson } from "../internal/safe-json.js";
import { ChatApiError } from "./chat-api-error.js";
import { CONVERSATION_HEADER, THREAD_HEADER } from "./thread-headers.js";

/** Who the caller is: the position of its key (`key-1`, ...) or `anonymous` when the bridge has no keys. */
export type Principal = string;

/** Matches a presented key against the configured ones in constant time (SHA-256 digests of equal length). */
export class ApiKeyCheck {
  readonly #digests: Buffer[];

  constructor(keys: readonly string[]) {
    this.#digests = keys.map(digest);
  }

  /** The caller's principal, or a 401. */
  authenticate(request: IncomingMessage): Principal {
    if (this.#digests.length === 0) return "anonymous";
    const header = request.headers.authorization;
    if (typeof header !== "string") throw unauthorized("missing API key (send Authorization: Bearer <key>)");
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw unauthorized("malformed Authorization header (expected Bearer <key>)");
    const presented = digest(match[1]!);
    let found = -1;
    this.#digests.forEach((known, index) => {
      if (timingSafeEqual(known, presented) && found < 0) found = index;
    });
    if (found < 0) throw unauthorized("invalid API key");
    return `key-${found + 1}`;
  }
}

/** Browser and DNS-rebinding protection; returns the CORS headers for an allowed origin. */
export function checkOrigin(
  request: IncomingMessage,
  options: { bindHost: string; allowedHosts: readonly string[]; allowedOrigins: readonly string[] },
): Record<string, string> {
  const host = request.headers.host;
  if (typeof host !== "string") throw new ChatApiError(400, "invalid_request_error", "bad_host", "a Host header is required");
  const hostname = hostnameOf(host);
  if (hostname === undefined) throw new ChatApiError(400, "invalid_request_error", "bad_host", "malformed Host header");
  const bind = options.bindHost.toLowerCase().replace(/^\[|\]$/g, "");
  const anyHost = !isLoopbackHost(bind) && options.allowedHosts.length === 0;
  if (!anyHost && !isLoopbackHost(hostname) && hostname !== bind && !options.allowedHosts.includes(hostname)) {
    throw new ChatApiError(403, "permission_error", "host_not_allowed", "Host header not allowed");
  }
  const origin = request.headers.origin;
  if (origin === undefined) return {};
  if (!options.allowedOrigins.includes(origin)) {
    throw new ChatApiError(
      403,
      "permission_error",
      "origin_not_allowed",
      "browser requests (an Origin header) are not accepted from this origin",
    );
  }
  return {
    "access-control-allow-origin": origin,
    "access-control-allow-headers": `authorization, content-type, ${THREAD_HEADER}`,
    "access-control-allow-methods": "GET, POST, OPTIONS",
    "access-control-expose-headers": `${THREAD_HEADER}, ${CONVERSATION_HEADER}`,
    vary: "Origin",
  };
}

/** Reads the body as JSON: 413 past `maxBytes` (the rest is not read), 400 for anything but a JSON document. */
export async function readJsonBody(request: IncomingMessage, maxBytes: number): Promise<unknown> {
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  const parsed = parseJson(Buffer.concat(chunks).toString("utf8"));
  if (!parsed.ok) throw ChatApiError.invalid("invalid_json", `the request body is not JSON (${parsed.error})`);
  return parsed.value;
}

/** Writes one JSON answer (nothing if the response was already sent or the socket is gone). */
export function sendJson(response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  if (response.headersSent || response.destroyed) return;
  const text = JSON.stringify(value);
  response.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  response.end(text);
}

function hostnameOf(hostHeader: string): string | undefined {
  const value = hostHeader.trim().toLowerCase();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    return end < 0 || !/^(:\d+)?$/.test(value.slice(end + 1)) ? undefined : value.slice(1, end);
  }
  return /^([a-z0-9.-]+)(:\d+)?$/.exec(value)?.[1];
}

function digest(key: string): Buffer {
  return createHash("sha256").update(key).digest();
}

function unauthorized(message: string): ChatApiError {
  return new ChatApiError(401, "authentication_error", "invalid_api_key", message);
}

function tooLarge(maxBytes: number): ChatApiError {
  return new ChatApiError(
    413,
    "invalid_request_error",
    "body_too_large",
    `the request body is larger than ${maxBytes} bytes (maxBodyBytes)`,
  );
}
