import { describe, expect, it } from "vitest";
import { silentRelayLogger } from "../../packages/relay/src/relay-options.js";
import { buildKeyTenants, resolveRelayOptions } from "../../packages/relay/src/resolve-relay-options.js";
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
    expect(buildKeyTenants({ apiKeys: ["a", "b"] })).toEqual(
      new Map([
        ["a", "key-1"],
        ["b", "key-2"],
      ]),
    );
    expect(buildKeyTenants({ apiKeys: ["a", "c"], tenants: { team: ["a", "b"] } })).toEqual(
      new Map([
        ["a", "team"],
        ["b", "team"],
        ["c", "key-2"],
      ]),
    );
    expect(() => buildKeyTenants({ tenants: { one: ["k"], two: ["k"] } })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
    expect(() => buildKeyTenants({ tenants: { "bad name": ["k"] } })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
    expect(() => buildKeyTenants({ tenants: { empty: [] } })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
    expect(() => buildKeyTenants({ tenants: { t: ["with space"] } })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
    expect(() => buildKeyTenants({ apiKeys: ["x"], tenants: { "key-1": ["y"] } })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS" }),
    );
  });

  it("a public bind is allowed with tenants alone", () => {
    expect(resolveRelayOptions({ host: "0.0.0.0", tenants: { team: ["key-0123"] } }).keyTenants.size).toBe(1);
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
