/**
 * The one loopback rule (internal/loopback-host.ts) that the relay, the OpenAI bridge, the scripted
 * runtime and the fault proxy apply to their bind address and to `Host` headers.
 */
import { isIPv4 } from "node:net";
import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { isLoopbackHost } from "../../packages/toolrelay/src/internal/loopback-host.js";
import { isLoopbackHost as relayIsLoopbackHost } from "../../packages/relay/src/index.js";
import { isLoopbackHost as protocolIsLoopbackHost } from "../../packages/toolrelay/src/protocol/index.js";

describe("isLoopbackHost", () => {
  it.each(["localhost", "LocalHost", "127.0.0.1", "127.1.2.3", "127.255.255.255", "127.0.0.0", "::1", "[::1]"])("accepts %s", (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });

  it.each([
    ["127.0.0.1000", "an octet over three digits"],
    ["127.256.0.1", "an octet over 255"],
    ["127.1", "shorthand"],
    ["0x7f.1", "hexadecimal"],
    ["0x7f.0.0.1", "a hexadecimal octet"],
    ["0177.0.0.1", "octal"],
    ["127.0.0.01", "a leading zero"],
    ["127.0.0.1.", "a trailing dot"],
    ["localhost.", "a trailing dot"],
    ["127.0.0.1:80", "a port"],
    [" 127.0.0.1", "white space"],
    ["128.0.0.1", "outside 127.0.0.0/8"],
    ["0.0.0.0", "every interface"],
    ["::", "every IPv6 interface"],
    ["0:0:0:0:0:0:0:1", "another spelling of ::1"],
    ["::ffff:127.0.0.1", "an IPv4-mapped address"],
    ["[::1", "an unclosed bracket"],
    ["localhost.example.com", "a name under localhost"],
    ["", "nothing"],
  ])("refuses %s (%s)", (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });

  test.prop([fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 })])(
    "accepts every dotted quad of 127.0.0.0/8",
    (b, c, d) => {
      expect(isLoopbackHost(`127.${b}.${c}.${d}`)).toBe(true);
    },
  );

  test.prop([fc.oneof(fc.ipV4(), fc.ipV4Extended(), fc.string(), fc.stringMatching(/^127(\.[0-9a-fx]{1,5}){1,4}$/))])(
    "on anything else agrees with node:net: a strict IPv4 address whose first octet is 127",
    (host) => {
      if (host.toLowerCase() === "localhost" || host === "::1" || host === "[::1]") return;
      expect(isLoopbackHost(host)).toBe(isIPv4(host) && host.split(".")[0] === "127");
    },
  );

  it("is one function: the relay package exports the SDK's, through toolrelay/protocol", () => {
    expect(relayIsLoopbackHost).toBe(isLoopbackHost);
    expect(protocolIsLoopbackHost).toBe(isLoopbackHost);
  });
});
