/**
 * Who may talk to the relay: Bearer API keys (each leading to a tenant, see
 * tenant-directory.ts, with roles, see relay-keys.ts), no browser-style requests (an `Origin` header), and no foreign `Host`
 * header (DNS rebinding) on a loopback bind. Nothing here logs or echoes a key.
 */
import type { IncomingMessage } from "node:http";
import { isLoopbackHost } from "toolrelay/protocol";
import { missingRoleMessage, type RelayKeyRole } from "./relay-keys.js";
import type { Principal, TenantDirectory } from "./tenant-directory.js";

/** A refusal: the HTTP status and a short text that never contains a credential. */
export interface Refusal {
  status: number;
  message: string;
}

function countRawHeaders(request: IncomingMessage, name: string): number {
  let total = 0;
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    if (request.rawHeaders[index]?.toLowerCase() === name) total++;
  }
  return total;
}

/**
 * The credential check for one request or upgrade: the caller's principal, or a refusal. `url`
 * is the parsed request URL (for the `token` query parameter, which only SDK status sockets may
 * use, and only when allowed).
 */
export function authenticate(
  request: IncomingMessage,
  url: URL,
  directory: TenantDirectory,
  options: { allowQueryToken: boolean },
): { principal: Principal } | { refusal: Refusal } {
  const queryToken = url.searchParams.get("token");
  if (queryToken !== null && !options.allowQueryToken) {
    return { refusal: { status: 401, message: "query-string tokens are disabled on this relay; use Authorization: Bearer" } };
  }
  if (countRawHeaders(request, "authorization") > 1) {
    return { refusal: { status: 401, message: "more than one Authorization header" } };
  }
  const anonymous = directory.anonymous;
  const header = request.headers.authorization;
  if (anonymous) {
    // Without keys every request is the default tenant's; a sandbox's listener is still told apart by its own key.
    const bearer = typeof header === "string" ? /^Bearer ([^\s]+)$/i.exec(header)?.[1] : undefined;
    const sandbox = bearer === undefined ? undefined : directory.match(bearer);
    return { principal: sandbox ?? anonymous };
  }
  let presented: string | undefined;
  if (typeof header === "string") {
    const match = /^Bearer ([^\s]+)$/i.exec(header);
    if (!match) return { refusal: { status: 401, message: "malformed Authorization header (expected Bearer <key>)" } };
    presented = match[1];
  } else if (queryToken !== null) {
    presented = queryToken;
  }
  if (presented === undefined) return { refusal: { status: 401, message: "missing API key" } };
  const principal = directory.match(presented);
  if (!principal) return { refusal: { status: 401, message: "invalid API key" } };
  return { principal };
}

/**
 * A 403 when the principal's key lacks `role`: an SDK key may never act as a listener (register
 * an environment or open its listener socket), a listener key never as an SDK client.
 */
export function checkKeyRole(principal: Principal, role: RelayKeyRole): Refusal | undefined {
  return principal.roles.includes(role) ? undefined : { status: 403, message: missingRoleMessage(role) };
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
