import type { Letta } from "@letta-ai/letta-client";
import { ToolrelayError } from "../errors.js";

/**
 * The Letta REST client of the cloud backend, and the one mapping of its
 * errors to {@link ToolrelayError}s. All REST calls go through
 * `@letta-ai/letta-client`, so authentication, base URL, timeouts and retries
 * are the client's.
 */
export interface LettaRestClientOptions {
  apiKey: string;
  /** API base URL, e.g. `https://api.letta.com`. */
  baseUrl: string;
  /** Extra headers (e.g. `x-project-id`); an `authorization` header here is dropped (the key is the client's). */
  headers?: Record<string, string> | undefined;
  /** Retries of a failed request (network error, 408/409/429/5xx), the client's policy. Default 2. */
  maxRetries?: number | undefined;
  /** Deadline of one request, in ms. Default 60_000 (the client's). */
  timeoutMs?: number | undefined;
}

/**
 * Build a letta-client for the given key and base URL (never read from the
 * environment here). The client module is loaded on first use, so sessions
 * that never look anything up (local backend, `{ connectionId }`) never load it.
 */
export async function createLettaRestClient(options: LettaRestClientOptions): Promise<Letta> {
  const { Letta: LettaClient } = await import("@letta-ai/letta-client");
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (name.toLowerCase() !== "authorization") headers[name] = value;
  }
  return new LettaClient({
    apiKey: options.apiKey,
    baseURL: options.baseUrl,
    defaultHeaders: headers,
    ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
  });
}

/**
 * The API key for the cloud backend: the `apiKey` option, else env
 * `LETTA_API_KEY`, else env `LETTA_CLOUD_API_KEY`. Throws INVALID_OPTIONS when
 * none is set (the message names the sources, never a value).
 */
export function resolveCloudApiKey(apiKey: string | undefined): string {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> | undefined } | undefined }).process?.env ?? {};
  for (const candidate of [apiKey, env.LETTA_API_KEY, env.LETTA_CLOUD_API_KEY]) {
    const trimmed = candidate?.trim();
    if (trimmed) return trimmed;
  }
  throw new ToolrelayError("INVALID_OPTIONS", "no Letta API key: pass backend.apiKey or set LETTA_API_KEY (or LETTA_CLOUD_API_KEY)");
}

/**
 * Map an error thrown by letta-client to a ToolrelayError: HTTP 401/403 →
 * UNAUTHORIZED, 404 → NOT_FOUND, anything else (other statuses, network
 * errors, timeouts) → REST_FAILED. The client's error is the `cause`; the
 * message says what was attempted and the status only (no response body, no key).
 */
export function toRestError(error: unknown, action: string): ToolrelayError {
  if (ToolrelayError.is(error)) return error;
  const status = typeof (error as { status?: unknown })?.status === "number" ? (error as { status: number }).status : undefined;
  const kind = error instanceof Error ? error.constructor.name : "error";
  if (status === 401 || status === 403) {
    return new ToolrelayError("UNAUTHORIZED", `Letta API refused the API key while trying to ${action} (HTTP ${status})`, {
      cause: error,
      details: { status },
    });
  }
  if (status === 404) {
    return new ToolrelayError("NOT_FOUND", `Letta API answered 404 while trying to ${action}`, { cause: error, details: { status } });
  }
  const what = status === undefined ? `could not reach the Letta API (${kind})` : `Letta API answered HTTP ${status}`;
  return new ToolrelayError("REST_FAILED", `failed to ${action}: ${what}`, {
    cause: error,
    details: status === undefined ? {} : { status },
  });
}
