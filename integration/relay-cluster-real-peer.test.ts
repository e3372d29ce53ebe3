/**
 * Issue 27: the relay as a cluster (docs/relay-cluster.md), against the REAL Letta Code listener.
 * Three relay nodes share their state in a real NATS JetStream server; a round-robin TCP balancer
 * (no sticky sessions) sits in front of them; the listener and the SDK both connect through it,
 * so their sockets land on any node and are piped to the node holding the environment.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, defineTool, type Session } from "../packages/toolrelay/src/index.js";
import { z } from "zod";
import { until } from "../test/support/wait.js";
import { startClusterStack, type ClusterNode, type ClusterStack } from "./support/cluster-stack.js";

const directive = (row: string) => `CALL note {"row":"${row}"}`;

/** A tool that counts its executions per row, taking `delayMs`. */
function noteTool(runs: Map<string, number>, delayMs: number) {
  return defineTool({
    name: "note",
    description: "Writes one row.",
    inputSchema: z.object({ row: z.string() }),
    async execute({ row }) {
      runs.set(row, (runs.get(row) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return `noted ${row}`;
    },
  });
}

describe("relay cluster: 3 nodes behind a round-robin balancer, the real listener", () => {
  let stack: ClusterStack;
  beforeAll(async () => {
    stack = await startClusterStack({ envName: "toolrelay-cluster", nodes: 3, leaseTtlMs: 1_500 });
  }, 90_000);
  afterAll(async () => stack?.stop());

  it("many turns with tool calls, the sockets landing on every node", async () => {
    const runs = new Map<string, number>();
    const session = await createSession(stack.sessionOptions({ tools: [noteTool(runs, 200)] }));
    try {
      for (let turn = 1; turn <= 4; turn++) {
        const result = await session.send(directive(`turn-${turn}`)).result;
        expect(result.stopReason).toBe("end_turn");
        expect(result.toolOutputs.map((output) => output.output)).toEqual([`noted turn-${turn}`]);
      }
      expect([...runs.values()]).toEqual([1, 1, 1, 1]);
      const counts = stack.proxy.counts();
      expect(Object.keys(counts).length).toBe(3);
    } finally {
      await session.close();
    }
  }, 120_000);

  it("kill -9 of the node holding the environment while a tool runs: the call settles once, the turn ends", async () => {
    const runs = new Map<string, number>();
    let session: Session | undefined;
    try {
      session = await createSession(stack.sessionOptions({ tools: [noteTool(runs, 3_000)] }));
      await session.send(directive("warm")).result;
      const connectionId = await stack.connectionId();
      const holder = await stack.holder(connectionId);
      expect(holder).toBeDefined();
      const turn = session.send(directive("across-the-kill"));
      await until(() => runs.get("across-the-kill") === 1, "the tool started", 20_000);
      await stack.kill(holder!);
      const result = await turn.result;
      expect(result.stopReason).toBe("end_turn");
      expect(result.toolOutputs.map((output) => output.output)).toEqual(["noted across-the-kill"]);
      expect(runs.get("across-the-kill")).toBe(1);
      const next = await stack.holder(connectionId);
      expect(next).toBeDefined();
      expect(next!.nodeId).not.toBe(holder!.nodeId);
      const takeover = next!.process.lines.find(
        (line) => line.includes("taken over from the cluster store") && line.includes(connectionId),
      );
      console.info(`[cluster kill] ${holder!.nodeId} killed; ${next!.nodeId} took over: ${takeover}`);
      expect(takeover).toContain('"calls":1');
      const after = await session.send(directive("after-the-kill")).result;
      expect(after.toolOutputs.map((output) => output.output)).toEqual(["noted after-the-kill"]);
      await stack.restart(holder!);
    } finally {
      await session?.close();
    }
  }, 120_000);

  it("a frozen holder (SIGSTOP) loses the environment: what was written to it is reported unconfirmed, never run; when it wakes it writes nothing and lets go; the next turn completes once", async () => {
    const runs = new Map<string, number>();
    let session: Session | undefined;
    let frozen: ClusterNode | undefined;
    try {
      session = await createSession(stack.sessionOptions({ tools: [noteTool(runs, 100)], requestTimeoutMs: 8_000 }));
      await session.send(directive("before-the-freeze")).result;
      const connectionId = await stack.connectionId();
      frozen = await stack.holder(connectionId);
      expect(frozen).toBeDefined();
      const frozenNode = frozen!;
      const linesBefore = frozenNode.process.lines.length;
      process.kill(frozenNode.process.pid, "SIGSTOP");
      // Written into the frozen node's socket: it never reaches the runtime. The SDK cannot know
      // that; it says so at the input's deadline — never an empty end_turn (the fallback that ended
      // such a turn was an SDK bug this test found).
      const lost = session.send(directive("into-the-frozen-node"));
      await expect(lost.result).rejects.toMatchObject({ code: "INPUT_UNCONFIRMED" });
      expect(runs.get("into-the-frozen-node")).toBeUndefined();
      // Meanwhile the SDK found the node dead and reconnected through the balancer; once the lease
      // ran out, another node took the environment over (the listener is still stuck on the frozen node).
      const taker = await untilHolderOtherThan(stack, connectionId, frozenNode.nodeId, 30_000);
      const next = session.send(directive("after-the-takeover"));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      process.kill(frozenNode.process.pid, "SIGCONT");
      frozen = undefined;
      // On waking, the node finds by its own clock that its lease ran out: it lets the environment
      // go (closing the listener's sockets, 1012), writes nothing, and the listener reconnects to the taker.
      const result = await next.result;
      expect(result.stopReason).toBe("end_turn");
      expect(result.toolOutputs.map((output) => output.output)).toEqual(["noted after-the-takeover"]);
      expect(runs.get("after-the-takeover")).toBe(1);
      const afterWake = frozenNode.process.lines.slice(linesBefore).filter((line) => line.includes(connectionId));
      console.info(`[cluster freeze] ${frozenNode.nodeId} after SIGCONT:\n${afterWake.join("\n")}`);
      expect(afterWake.some((line) => line.includes("environment lease lost"))).toBe(true);
      expect(afterWake.some((line) => line.includes("environment lease taken"))).toBe(false);
      expect((await stack.holder(connectionId))?.nodeId).toBe(taker.nodeId);
      expect(runs.get("into-the-frozen-node")).toBeUndefined();
    } finally {
      if (frozen) process.kill(frozen.process.pid, "SIGCONT");
      await session?.close();
    }
  }, 120_000);
});

/** Polls the shared store until a node other than `nodeId` holds the environment. */
async function untilHolderOtherThan(stack: ClusterStack, connectionId: string, nodeId: string, timeoutMs: number): Promise<ClusterNode> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const holder = await stack.holder(connectionId);
    if (holder && holder.nodeId !== nodeId) return holder;
    if (Date.now() > deadline) throw new Error(`no node other than ${nodeId} took ${connectionId} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
