/**
 * Issue 27: the relay's cluster options and `--cluster*` flags — every bad value is refused with
 * an error that names it, and nothing is half-started: a relay whose NATS servers cannot be reached
 * does not listen.
 */
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { CliUsageError, parseCommandLine } from "@toolrelay/cli-kit";
import { RELAY_COMMAND, relayOptionsOf } from "../../packages/relay/src/cli.js";
import { DEFAULT_LEASE_TTL_MS, resolveClusterOptions } from "../../packages/relay/src/cluster/cluster-options.js";
import { resolveRelayOptions, startRelay } from "../../packages/relay/src/index.js";

const quiet = { stdout: () => {}, stderr: () => {} };

function parse(argv: string[]) {
  const line = parseCommandLine(RELAY_COMMAND, argv);
  return line.kind === "run" ? relayOptionsOf(line.arguments, quiet) : undefined;
}

describe("cluster options", () => {
  it("fill their defaults: a random node id, the toolrelay buckets, one replica, a 3 s lease", () => {
    const resolved = resolveClusterOptions({ servers: ["nats://127.0.0.1:4222"] });
    expect(resolved).toMatchObject({ name: "toolrelay", replicas: 1, leaseTtlMs: DEFAULT_LEASE_TTL_MS, advertiseAddress: undefined });
    expect(resolved.nodeId).toMatch(/^node-[0-9a-f]{8}$/);
    expect(DEFAULT_LEASE_TTL_MS).toBe(3_000);
  });

  it.each([
    [{ servers: [] }, "servers must name at least one NATS server"],
    [{ servers: ["http://127.0.0.1:4222"] }, "is not a nats:// or tls:// URL"],
    [{ servers: ["nats://a"], nodeId: "node one" }, "nodeId must be"],
    [{ servers: ["nats://a"], name: "a.b" }, "name must be"],
    [{ servers: ["nats://a"], replicas: 2 as 1 }, "replicas must be 1, 3 or 5"],
    [{ servers: ["nats://a"], leaseTtlMs: 100 }, "leaseTtlMs must be an integer from 600 to 600000"],
    [{ servers: ["nats://a"], leaseTtlMs: 1.5 }, "leaseTtlMs must be"],
    [{ servers: ["nats://a"], advertiseAddress: "nohost" }, "advertiseAddress must be host:port"],
  ])("refuse %j naming the option", (cluster, message) => {
    expect(() => resolveClusterOptions(cluster)).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS", message: expect.stringContaining(message) }),
    );
  });

  it("cannot be combined with sandboxes (those are per process)", () => {
    expect(() =>
      resolveRelayOptions({ cluster: { servers: ["nats://a"] }, sandbox: { command: "/bin/true", args: [], env: {}, readOnlyPaths: [] } }),
    ).toThrow(/cluster and sandbox cannot be combined/);
  });

  it("a relay whose NATS servers cannot be reached refuses to start (INVALID_OPTIONS) and leaves its port free", async () => {
    const port = await freePort();
    const dead = await freePort();
    await expect(startRelay({ port, cluster: { servers: [`nats://127.0.0.1:${dead}`] } })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
      message: expect.stringContaining("cannot connect to the cluster's NATS servers"),
    });
    // The port is free again: nothing was left listening.
    const again = createServer();
    await new Promise<void>((resolve, reject) => {
      again.once("error", reject);
      again.listen(port, "127.0.0.1", () => resolve());
    });
    await new Promise<void>((resolve) => again.close(() => resolve()));
  }, 20_000);
});

describe("--cluster flags", () => {
  it("parse servers (repeatable or comma-separated) and every cluster setting", () => {
    expect(
      parse([
        "--cluster",
        "nats://a:4222,nats://b:4222",
        "--cluster",
        "nats://c:4222",
        "--node-id",
        "n1",
        "--cluster-name",
        "prod",
        "--cluster-replicas",
        "3",
        "--lease-ttl-ms",
        "2000",
        "--advertise-address",
        "10.0.0.5:8080",
      ])?.cluster,
    ).toEqual({
      servers: ["nats://a:4222", "nats://b:4222", "nats://c:4222"],
      nodeId: "n1",
      name: "prod",
      replicas: 3,
      leaseTtlMs: 2_000,
      advertiseAddress: "10.0.0.5:8080",
    });
    expect(parse([])?.cluster).toBeUndefined();
  });

  it("refuse a cluster setting without --cluster, and a replica count that is not 1, 3 or 5", () => {
    expect(() => parse(["--node-id", "n1"])).toThrow(new CliUsageError("--node-id needs --cluster"));
    expect(() => parse(["--cluster", "nats://a", "--cluster-replicas", "2"])).toThrow(CliUsageError);
    expect(() => parse(["--cluster", "nats://a", "--lease-ttl-ms", "soon"])).toThrow(CliUsageError);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}
