/**
 * Which host names the loopback interface — the one rule every server of the repository applies
 * to its bind address and to a request's `Host` header (the relay, the OpenAI bridge, the scripted
 * runtime, the fault proxy), so that "loopback only" means the same everywhere.
 */

/** An IPv4 octet as a dotted quad writes it: 0–255, no sign, no leading zero. */
const OCTET = /^(0|[1-9]\d{0,2})$/;

/**
 * Whether `host` names the loopback interface: `localhost` (any case), an IPv4 address in
 * 127.0.0.0/8 written as a dotted quad (`127.0.0.1`, `127.1.2.3`), or `::1` (also `[::1]`).
 * Refused on purpose: shorthand and other radixes (`127.1`, `0x7f.0.0.1`, `0177.0.0.1`, `127.0.0.01`),
 * out-of-range octets (`127.0.0.1000`, `127.256.0.1`), other IPv6 spellings of loopback
 * (`0:0:0:0:0:0:0:1`, `::ffff:127.0.0.1`), a trailing dot, ports and white space — names that some
 * resolvers map to loopback and others do not, so a guard must not take them for it.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (bare === "::1" || bare.toLowerCase() === "localhost") return true;
  const octets = bare.split(".");
  return octets.length === 4 && octets[0] === "127" && octets.every((octet) => OCTET.test(octet) && Number(octet) <= 255);
}
