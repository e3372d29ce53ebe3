/**
 * Issue 27 at volume, the bounded CI part (the full figures: `npm run soak:cluster`): three relay
 * nodes on one NATS JetStream server behind a round-robin balancer, a protocol-level listener and
 * one protocol-level SDK client per runtime (integration/support/cluster-load.ts; the real
 * listener's behaviour is integration/relay-cluster-real-peer.test.ts).
 *
 * - G1: 200 calls with a kill -9 of the node holding the environment, and of a node that pipes SDK
 *   sockets to it: 0 duplicate executions, 0 stranded, every delivered call answered; the
 *   pre-acknowledgement losses are printed.
 * - The control: the same kill with clients that run every delivery (no call-key dedupe) runs
 *   calls twice — the redelivery the SDK's rule absorbs.
 * - G6: 100 forced SDK reconnects during traffic: 0 frames lost, no 404 / 403 on a reconnect.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runClusterLoad } from "./support/cluster-load.js";
import { type ClusterLoadReport, describeLoadReport } from "./support/cluster-load-report.js";
import { type ClusterStack, startClusterStack } from "./support/cluster-stack.js";

function expectNothingLost(report: ClusterLoadReport): void {
  expect(report.written).toBe(report.calls);
  expect(report.duplicates).toBe(0);
  expect(report.strandedIds).toEqual([]);
  expect(report.wrongAnswers).toBe(0);
  expect(report.relayErrors).toBe(0);
  expect(report.rejected).toBe(0);
  // Every call a client got was answered to the listener.
  expect(report.answeredOnce + report.writtenTwice).toBe(report.delivered);
}

describe("relay cluster under load: 3 nodes, one NATS server, a round-robin balancer", () => {
  let stack: ClusterStack;
  beforeAll(async () => {
    stack = await startClusterStack({ envName: "toolrelay-load", nodes: 3, leaseTtlMs: 1_500, listener: false });
  }, 90_000);
  afterAll(async () => stack?.stop());

  it("G1: kill -9 of the holder during 200 calls — no duplicate, nothing stranded", async () => {
    const report = await runClusterLoad({ stack, calls: 200, kill: "holder", seed: 101 });
    console.info(`[cluster load] ${describeLoadReport(report)}`);
    expect(report.killed).toBe(report.holderBefore);
    expect(report.holderAfter).not.toBe(report.holderBefore);
    expectNothingLost(report);
    expect(report.answeredOnce + report.writtenTwice + report.preAckLosses).toBe(report.calls);
  }, 60_000);

  it("G1: kill -9 of a node piping SDK sockets during 200 calls — no duplicate, nothing stranded, nothing lost", async () => {
    const report = await runClusterLoad({ stack, calls: 200, kill: "sdk-entry", seed: 202 });
    console.info(`[cluster load] ${describeLoadReport(report)}`);
    expect(report.killed).toBeDefined();
    expect(report.killed).not.toBe(report.holderBefore);
    expect(report.holderAfter).toBe(report.holderBefore);
    expect(report.firstFrameMs.length).toBeGreaterThan(0);
    expectNothingLost(report);
    expect(report.answeredOnce + report.writtenTwice + report.preAckLosses).toBe(report.calls);
  }, 60_000);

  it("the control: clients without call-key dedupe run redelivered calls twice across the same kill", async () => {
    const report = await runClusterLoad({ stack, calls: 200, kill: "holder", seed: 303, dedupe: false });
    console.info(`[cluster load, control] ${describeLoadReport(report)}`);
    expect(report.duplicates).toBeGreaterThan(0);
  }, 60_000);

  it("G6: 100 forced SDK reconnects to random nodes during traffic — 0 frames lost, 0 404/403", async () => {
    const report = await runClusterLoad({ stack, calls: 400, kill: "none", seed: 404, spreadMs: 4_000, forcedReconnects: 100 });
    console.info(`[cluster load, G6] ${describeLoadReport(report)} entries=${JSON.stringify(report.entries)}`);
    expect(report.forcedReconnects).toBeGreaterThanOrEqual(100);
    expect(report.clientReconnects).toBeGreaterThanOrEqual(100);
    expect(report.framesLost).toBe(0);
    expect(report.seqGaps).toBe(0);
    expect(report.preAckLosses).toBe(0);
    expect(report.refusals["404"] ?? 0).toBe(0);
    expect(report.refusals["403"] ?? 0).toBe(0);
    expectNothingLost(report);
    expect(report.delivered).toBe(report.calls);
    expect(Object.keys(report.entries).length).toBe(3);
  }, 60_000);
});
