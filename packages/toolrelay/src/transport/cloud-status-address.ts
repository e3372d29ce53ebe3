import { ToolrelayError } from "../errors.js";
import { secretForms, upgradeHeaders } from "./open-web-socket.js";

/** The two status sockets of a cloud link. */
export type CloudChannel = "control" | "stream";

/**
 * How the API key reaches the relay.
 * - `"header"` (default): `Authorization: Bearer <apiKey>` on both sockets.
 * - `"query"`: `?token=<apiKey>` in both socket URLs, for clients that cannot
 *   set upgrade headers (browsers). The key then sits in URLs, so in proxy and
 *   server access logs. Only used when asked for explicitly.
 */
export type CloudAuthMode = "header" | "query";

/** Default Letta Cloud API base URL. */
export const DEFAULT_CLOUD_BASE_URL = "https://api.letta.com";

export interface CloudStatusAddress {
  /** API base URL; `https:` becomes `wss:` and `http:` becomes `ws:`. */
  baseUrl: string;
  /** The environment's connection id (path segment, URL-encoded). */
  connectionId: string;
  agentId?: string | undefined;
  conversationId?: string | undefined;
  /**
   * A stable id of this client's status session, the same for both sockets and
   * across reconnects, so a relay can resume it (redeliver unacked frames).
   */
  sessionId?: string | undefined;
}

/** Check a base URL and return it without a trailing slash. Throws INVALID_OPTIONS. */
export function normaliseCloudBaseUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new ToolrelayError("INVALID_OPTIONS", "backend.baseUrl is not a URL");
  }
  if (!["http:", "https:", "ws:", "wss:"].includes(url.protocol)) {
    throw new ToolrelayError("INVALID_OPTIONS", `backend.baseUrl must be https:// or http://, got ${url.protocol}`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new ToolrelayError("INVALID_OPTIONS", "backend.baseUrl must not carry credentials, a query or a fragment");
  }
  return url.toString().replace(/\/+$/, "");
}

/**
 * The status socket URL for one channel:
 * `<base, https→wss>/v1/environments/{connectionId}/status/ws?agentId=…&conversationId=…&channel=…`
 * (plus `token=` only in query auth mode).
 */
export function cloudStatusUrl(address: CloudStatusAddress, channel: CloudChannel, auth: { mode: CloudAuthMode; apiKey: string }): string {
  const url = new URL(normaliseCloudBaseUrl(address.baseUrl));
  if (url.protocol === "https:") url.protocol = "wss:";
  else if (url.protocol === "http:") url.protocol = "ws:";
  const prefix = url.pathname.replace(/\/+$/, "");
  url.pathname = `${prefix}/v1/environments/${encodeURIComponent(address.connectionId)}/status/ws`;
  if (address.agentId) url.searchParams.set("agentId", address.agentId);
  if (address.conversationId) url.searchParams.set("conversationId", address.conversationId);
  url.searchParams.set("channel", channel);
  if (address.sessionId) url.searchParams.set("sessionId", address.sessionId);
  if (auth.mode === "query") url.searchParams.set("token", auth.apiKey);
  return url.toString();
}

/**
 * Upgrade headers: the caller's headers with any `authorization` header
 * removed, plus `Authorization: Bearer <apiKey>` in header mode.
 */
export function cloudStatusHeaders(apiKey: string, mode: CloudAuthMode, extra: Record<string, string> | undefined): Record<string, string> {
  return upgradeHeaders(extra, mode === "header" ? apiKey : undefined);
}

/** The strings that must never appear in an error, a log line or a close reason: the key's raw, URL- and form-encoded forms. */
export function cloudSecrets(apiKey: string): string[] {
  return secretForms(apiKey);
}
