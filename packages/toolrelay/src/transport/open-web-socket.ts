import WebSocket from "ws";
import { ToolrelayError } from "../errors.js";
import type { Timers } from "../internal/timers.js";

/** The `ws` WebSocket class, or a compatible one (injectable for tests). */
export type WebSocketConstructor = typeof WebSocket;

/** Default upper bound of one inbound frame: 16 MiB. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;

export interface OpenWebSocketOptions {
  headers?: Record<string, string> | undefined;
  WebSocket?: WebSocketConstructor | undefined;
  /** Largest inbound frame accepted; a larger one closes the socket with 1009. Default 16 MiB. */
  maxPayload?: number | undefined;
  /** Give up on the handshake after this many ms. Default 10_000. */
  connectTimeoutMs?: number | undefined;
  timers: Timers;
  /**
   * Called synchronously when the socket opens, before the promise resolves:
   * attach message listeners here, or frames that arrive in the same chunk as
   * the handshake answer are missed.
   */
  onOpen?: ((socket: WebSocket) => void) | undefined;
  /** Text that must never appear in an error message (a token); replaced by `[redacted]`. */
  secrets?: readonly string[] | undefined;
}

/** The forms a secret takes in text: raw, URL-encoded and form-encoded (all of them are redacted). */
export function secretForms(secret: string): string[] {
  const forms = [secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2)];
  return [...new Set(forms)].filter((form) => form.length > 0);
}

/**
 * Upgrade headers: `extra` without any `authorization` header (whatever its case), plus
 * `Authorization: Bearer <token>` when there is a token.
 */
export function upgradeHeaders(extra: Record<string, string> | undefined, token: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(extra ?? {})) {
    if (name.toLowerCase() !== "authorization") headers[name] = value;
  }
  if (token) headers.Authorization = `Bearer ${token}`;
  return headers;
}

/** Replace every secret in `text` by `[redacted]`. */
export function redact(text: string, secrets: readonly string[] | undefined): string {
  let result = text;
  for (const secret of secrets ?? []) {
    if (secret.length > 0) result = result.split(secret).join("[redacted]");
  }
  return result;
}

/** The system error code of a socket error (`ECONNREFUSED`, `ENOTFOUND`, ...), if it has one. */
function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** `connect ECONNREFUSED 127.0.0.1:9`, `getaddrinfo ENOTFOUND nowhere.invalid`: the message, with the code when the message lacks it. */
function describeError(error: Error): string {
  const code = errorCode(error);
  const message = error.message || String(error);
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

/** The URL without its query string (query tokens must not reach errors or logs). */
export function describeUrl(url: string): string {
  const index = url.indexOf("?");
  return index === -1 ? url : `${url.slice(0, index)}?…`;
}

/**
 * Open one WebSocket and resolve once it is open. Rejects with a ToolrelayError:
 * `UNAUTHORIZED` for an HTTP 401/403 answer to the upgrade, `NOT_FOUND` for
 * 404, `CONNECT_FAILED` otherwise. No listener of ours is left on the socket after it settles,
 * except that an `error` listener stays (so a later error never crashes the process).
 */
export function openWebSocket(url: string, options: OpenWebSocketOptions): Promise<WebSocket> {
  const WebSocketClass = options.WebSocket ?? WebSocket;
  const where = describeUrl(url);
  return new Promise<WebSocket>((resolve, reject) => {
    let socket: WebSocket;
    try {
      socket = new WebSocketClass(url, {
        headers: options.headers,
        maxPayload: options.maxPayload ?? DEFAULT_MAX_PAYLOAD_BYTES,
        perMessageDeflate: false,
      });
    } catch (error) {
      reject(
        new ToolrelayError("CONNECT_FAILED", redact(`cannot open ${where}: ${(error as Error).message}`, options.secrets), {
          cause: error,
        }),
      );
      return;
    }
    const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    const timer = options.timers.setTimeout(() => {
      fail(new ToolrelayError("CONNECT_FAILED", `no WebSocket handshake from ${where} within ${connectTimeoutMs} ms`));
      socket.terminate();
    }, connectTimeoutMs);
    const cleanup = () => {
      options.timers.clearTimeout(timer);
      socket.off("open", onOpen);
      socket.off("unexpected-response", onUnexpectedResponse);
      socket.off("close", onClose);
    };
    let settled = false;
    const fail = (error: ToolrelayError) => {
      if (settled) return;
      settled = true;
      cleanup();
      reject(error);
    };
    const onOpen = () => {
      settled = true;
      cleanup();
      options.onOpen?.(socket);
      resolve(socket);
    };
    const onError = (error: Error) => {
      // Stays attached for the socket's life: an unhandled 'error' would crash the process.
      // `ws` reports a failed handshake (ECONNREFUSED, ENOTFOUND, a reset) as 'error' with the
      // socket already CLOSING, then 'close': the error is the reason, whatever the state.
      if (settled) return;
      fail(
        new ToolrelayError("CONNECT_FAILED", redact(`cannot connect to ${where}: ${describeError(error)}`, options.secrets), {
          cause: error,
          ...(errorCode(error) ? { details: { errno: errorCode(error) } } : {}),
        }),
      );
    };
    const onClose = (code: number) => {
      fail(new ToolrelayError("CONNECT_FAILED", `${where} closed during the handshake (code ${code})`));
    };
    const onUnexpectedResponse = (_request: unknown, response: { statusCode?: number | undefined; resume?: (() => void) | undefined }) => {
      const status = response.statusCode ?? 0;
      response.resume?.();
      const code = status === 401 || status === 403 ? "UNAUTHORIZED" : status === 404 ? "NOT_FOUND" : "CONNECT_FAILED";
      fail(new ToolrelayError(code, `${where} refused the WebSocket upgrade with HTTP ${status}`, { details: { status } }));
      socket.terminate();
    };
    socket.on("open", onOpen);
    socket.on("error", onError);
    socket.on("close", onClose);
    socket.on("unexpected-response", onUnexpectedResponse);
  });
}
