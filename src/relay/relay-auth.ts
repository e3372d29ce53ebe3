/**
 * Who may talk to the relay: Bearer API keys compared in constant time, no browser-style
 * requests (an `Origin` header), and no foreign `Host` header (DNS rebinding) on a loopback bind.
 * Nothing here logs or echoes a key.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { isLoopbackHost } from "./relay-options.js";

/** A refusal: the HTTP status and a short text that never contains a credential. */
export interface Refusal {
  status: number;
  message: string;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

/** Checks presented keys against the configured ones without early exit. */
export class ApiKeyChecker {
  private readonly digests: Buffer[];

  constructor(apiKeys: readonly string[]) {
    this.digests = apiKeys.map(digest);
  }

  /** `false` when no keys are configured (then every request is accepted). */
  get enabled(): boolean {
    return this.digests.length > 0;
  }

  /** Whether `presented` equals one of the keys. Compares against every key, in constant time each. */
  matches(presented: string): boolean {
    const candidate = digest(presented);
    let found = false;
    for (const known of this.digests) {
      if (timingSafeEqual(candidate, known)) found = true;
    }
    return found;
  }
}

function countRawHeaders(request: IncomingMessage, name: string): number {
  let total = 0;
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    if (request.rawHeaders[index]?.toLowerCase() === name) total++;
  }
  return total;
}

/**
 * The credential check for one request or upgrade. `url` is the parsed request URL (for the
 * `token` query parameter, which only SDK status sockets may use, and only when allowed).
 */
export function authenticate(
  request: IncomingMessage,
  url: URL,
  checker: ApiKeyChecker,
  options: { allowQueryToken: boolean },
): Refusal | undefined {
  const queryToken = url.searchParams.get("token");
  if (queryToken !== null && !options.allowQueryToken) {
    return { status: 401, message: "query-string tokens are disabled on this relay; use Authorization: Bearer" };
  }
  if (countRawHeaders(request, "authorization") > 1) {
    return { status: 401, message: "more than one Authorization header" };
  }
  if (!checker.enabled) return undefined;
  const header = request.headers.authorization;
  let presented: string | undefined;
  if (typeof header === "string") {
    const match = /^Bearer ([^\s]+)$/i.exec(header);
    if (!match) return { status: 401, message: "malformed Authorization header (expected Bearer <key>)" };
    presented = match[1];
  } else if (queryToken !== null) {
    presented = queryToken;
  }
  if (presented === undefined) return { status: 401, message: "missing API key" };
  if (!checker.matches(presented)) return { status: 401, message: "invalid API key" };
  return undefined;
}

/** The hostname part of a `Host` header (`[::1]:80` → `::1`), lower-cased; undefined if malformed. */
export function hostnameOf(hostHeader: string): string | undefined {
  const value = hostHeader.trim().toLowerCase();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    if (end < 0) return undefined;
    const rest = value.slice(end + 1);
    if (rest !== "" && !/^:\d+$/.test(rest)) return undefined;
    return value.slice(1, end);
  }
  const match = /^([a-z0-9.-]+)(:\d+)?$/.exec(value);
  return match ? match[1] : undefined;
}

/**
 * Browser and DNS-rebinding protection. An `Origin` header is refused (the relay serves no
 * browser pages). The `Host` must be a loopback name, the bind address or one of `allowedHosts`;
 * on a non-loopback bind without `allowedHosts` any Host is accepted (keys are required there).
 */
export function checkRequestOrigin(
  request: IncomingMessage,
  options: { bindHost: string; allowedHosts: readonly string[] | undefined },
): Refusal | undefined {
  if (request.headers.origin !== undefined) {
    return { status: 403, message: "browser requests (Origin header) are not accepted" };
  }
  const hostHeader = request.headers.host;
  if (typeof hostHeader !== "string" || countRawHeaders(request, "host") !== 1) {
    return { status: 400, message: "exactly one Host header is required" };
  }
  const hostname = hostnameOf(hostHeader);
  if (hostname === undefined) return { status: 400, message: "malformed Host header" };
  if (isLoopbackHost(hostname)) return undefined;
  if (options.allowedHosts?.includes(hostname)) return undefined;
  if (hostname === options.bindHost.toLowerCase().replace(/^\[|\]$/g, "")) return undefined;
  if (options.allowedHosts === undefined && !isLoopbackHost(options.bindHost)) return undefined;
  return { status: 403, message: "Host header not allowed" };
}
