import { describe, expect, it } from "vitest";
import { silentRelayLogger } from "../../packages/relay/src/relay-options.js";
import { buildRelayKeys, tenantsWithSharedRoles } from "../../packages/relay/src/relay-keys.js";
import { resolveRelayOptions } from "../../packages/relay/src/resolve-relay-options.js";
import { Tenant, type UnackedHolder } from "../../packages/relay/src/tenant.js";

function holder(bytes: number, onCut: () => void): UnackedHolder & { bytes: number } {
  return {
    bytes,
    get unackedBytes() {
      return this.bytes;
    },
    overTenantBudget() {
      onCut();
    },
  };
}

describe("tenants from options", () => {
  it("one key is one tenant; tenants group keys; a key in two tenants is refused", () => {
    const both = ["listener", "sdk"];
    expect(buildRelayKeys({ apiKeys: ["a", "b"] })).toEqual(
      new Map([
        ["a", { tenant: "key-1", roles: both }],
        ["b", { tenant: "key-2", roles: both }],
      ]),
    );
    expect(buildRelayKeys({ apiKeys: ["a", "c"], tenants: { team: ["a", "b"] } })).toEqual(
      new Map([
        ["a", { tenant: "team", roles: both }],
        ["b", { tenant: "team", roles: both }],
        ["c", { tenant: "key-2", roles: both }],
      ]),
    );
    const refused = (options: Parameters<typeof buildRelayKeys>[0], message: string) =>
      expect(() => buildRelayKeys(options)).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS", message: `relay: ${message}` }));
    refused({ tenants: { one: ["k"], two: ["k"] } }, "an API key is listed for two tenants (one and two)");
    refused({ tenants: { one: { listener: ["k"] }, two: { sdk: ["k"] } } }, "an API key is listed for two tenants (one and two)");
    refused({ tenants: { "bad name": ["k"] } }, 'tenant name "bad name" must be 1-64 characters of A-Z a-z 0-9 . _ -');
    refused({ tenants: { empty: [] } }, "tenant empty needs at least one API key");
    refused({ tenants: { empty: {} } }, "tenant empty needs at least one API key");
    refused({ tenants: { t: ["with space"] } }, "every API key must be a non-empty string without whitespace");
    refused({ tenants: { t: { sdk: ["with space"] } } }, "every API key must be a non-empty string without whitespace");
    refused({ apiKeys: ["x"], tenants: { "key-1": ["y"] } }, "tenant name key-1 is reserved for the key at position 1 of apiKeys");
  });

  it("key roles: { listener, sdk } gives each key its own, a key in both lists has both, a bare list means both; a wrong shape is refused without naming a key", () => {
    expect(buildRelayKeys({ tenants: { team: { listener: ["l", "both"], sdk: ["s", "both"] } } })).toEqual(
      new Map([
        ["l", { tenant: "team", roles: ["listener"] }],
        ["both", { tenant: "team", roles: ["listener", "sdk"] }],
        ["s", { tenant: "team", roles: ["sdk"] }],
      ]),
    );
    expect(buildRelayKeys({ tenants: { app: { sdk: ["only-sdk"] } } }).get("only-sdk")).toEqual({ tenant: "app", roles: ["sdk"] });
    const refused = (tenants: unknown, message: string) =>
      expect(() => buildRelayKeys({ tenants: tenants as Record<string, string[]> })).toThrow(
        expect.objectContaining({ code: "INVALID_OPTIONS", message: `relay: ${message}` }),
      );
    refused(
      { team: { listener: ["secret-key"], admin: ["secret-key-2"] } },
      'tenant team has an unknown key role "admin" (roles: listener, sdk)',
    );
    refused({ team: { sdk: "secret-key" } }, "tenant team: sdk must be a list of API keys");
    refused({ team: "secret-key" }, "tenant team must be a list of API keys or { listener: [...], sdk: [...] }");
    refused({ team: null }, "tenant team must be a list of API keys or { listener: [...], sdk: [...] }");
  });

  it("names the tenants where a key of both roles sits beside other keys (any of them could pose as the listener)", () => {
    const keys = buildRelayKeys({
      apiKeys: ["solo"],
      tenants: {
        legacy: ["listener-key", "app-key"],
        roled: { listener: ["l"], sdk: ["s1", "s2"] },
        mixed: { listener: ["m"], sdk: ["m", "m-app"] },
        single: ["only"],
      },
    });
    expect(tenantsWithSharedRoles(keys)).toEqual(["legacy", "mixed"]);
  });

  it("a public bind is allowed with tenants alone", () => {
    expect(resolveRelayOptions({ host: "0.0.0.0", tenants: { team: ["key-0123"] } }).keys.size).toBe(1);
    expect(() => resolveRelayOptions({ host: "0.0.0.0" })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
  });

  it("every bound has its documented default", () => {
    const options = resolveRelayOptions();
    expect(options).toMatchObject({
      maxSdkFrameBytes: 16 * 1024 * 1024,
      maxListenerFrameBytes: 16 * 1024 * 1024,
      maxBodyBytes: 64 * 1024,
      maxUnackedBytes: 8 * 1024 * 1024,
      maxUnackedBytesPerTenant: 64 * 1024 * 1024,
      sdkResumeWindowMs: 60_000,
      environmentGraceMs: 300_000,
      maxEnvironmentsPerTenant: 64,
      maxSessionsPerTenant: 256,
      maxOutstandingCallsPerTenant: 1_000,
      unownedCallTimeoutMs: 30_000,
      outstandingCallTtlMs: 900_000,
      maxQueuedCommands: 1_000,
      maxQueuedCommandBytes: 16 * 1024 * 1024,
      maxListenerBufferedBytes: 16 * 1024 * 1024,
      handshakeTimeoutMs: 5_000,
      maxConnections: 4_096,
      maxConnectionsPerAddress: 256,
      heartbeatIntervalMs: 30_000,
      respondToJsonPings: true,
    });
    expect(() => resolveRelayOptions({ handshakeTimeoutMs: 0 })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
    expect(() => resolveRelayOptions({ maxUnackedBytes: 1.5 })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
  });
});

describe("Tenant", () => {
  const limits = { environment: 2, session: 1, outstandingCall: 3, sandbox: 1, unackedBytes: 100 };

  it("reserves up to each cap and gives back what is released", () => {
    const tenant = new Tenant("t", limits, silentRelayLogger);
    expect([tenant.reserve("environment"), tenant.reserve("environment"), tenant.reserve("environment")]).toEqual([true, true, false]);
    tenant.release("environment");
    expect(tenant.reserve("environment")).toBe(true);
    expect(tenant.reserve("session")).toBe(true);
    expect(tenant.reserve("session")).toBe(false);
    tenant.release("outstandingCall", 5);
    expect(tenant.used("outstandingCall")).toBe(0);
    expect(tenant.usage()).toEqual({ tenant: "t", environments: 2, sessions: 1, outstandingCalls: 0, sandboxes: 0, unackedBytes: 0 });
  });

  it("past its unacked budget, tells the holder with the most to give it up", () => {
    const tenant = new Tenant("t", limits, silentRelayLogger);
    const cut: string[] = [];
    const small = holder(30, () => cut.push("small"));
    const large = holder(60, () => {
      cut.push("large");
      large.bytes = 0;
      tenant.setUnacked(large, 0);
    });
    tenant.setUnacked(small, 30);
    tenant.setUnacked(large, 60);
    expect(cut).toEqual([]);
    large.bytes = 80;
    tenant.setUnacked(large, 80);
    expect(cut).toEqual(["large"]);
    expect(tenant.usage().unackedBytes).toBe(30);
  });
});
