/**
 * What one pending tool call keeps alive, by V8 object type: two heap
 * snapshots around N calls of a tool that never resolves until aborted, diffed
 * and divided by N. Compare with the minimal baseline (`baseline`) or with a
 * bare AbortController + signal (`signal`); `toolrelay-ignore-signal` uses a tool that never reads
 * its signal (and never settles).
 *
 *   npx tsx bench/tools/heap-breakdown.ts [toolrelay|toolrelay-ignore-signal|baseline|signal] [calls=10000]
 */
import { readFileSync, rmSync } from "node:fs";
import { writeHeapSnapshot } from "node:v8";
import { z } from "zod";
import { buildSdkBundles } from "../harness/build-sdk.js";

const variant = process.argv[2] ?? "toolrelay";
const calls = Number(process.argv[3] ?? 10_000);
const bundles = await buildSdkBundles();
const { createSessionOnLink, defineTool } = await import("../harness/sdk.js");
const { BenchLink, toolCallRequestText } = await import("../harness/bench-link.js");
const { hangUntilAborted, noopTool } = await import("../harness/clients.js");

const hang = defineTool({
  name: "hang",
  description: "Never answers until aborted",
  inputSchema: z.object({}),
  execute: (_input, { signal }) => hangUntilAborted(signal),
});
const ignore = defineTool({
  name: "ignore",
  description: "Never answers",
  inputSchema: z.object({}),
  execute: () => new Promise<string>(() => undefined),
});
const link = new BenchLink();
const session = await createSessionOnLink({
  backend: { kind: "link", link },
  agent: { id: "agent-bench" },
  tools: [noopTool, hang, ignore],
  maxConcurrentCalls: calls + 1,
});
for (let n = 0; n < 2_000; n++) link.receive(toolCallRequestText(n, "noop"));
await new Promise((resolve) => setImmediate(resolve));

/** Count and self size per `type:name` in a heap snapshot. */
function aggregate(): Map<string, [count: number, bytes: number]> {
  const file = writeHeapSnapshot();
  const snapshot = JSON.parse(readFileSync(file, "utf8")) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  rmSync(file);
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const [typeIndex, nameIndex, sizeIndex] = ["type", "name", "self_size"].map((field) => fields.indexOf(field)) as [number, number, number];
  const totals = new Map<string, [number, number]>();
  for (let index = 0; index < snapshot.nodes.length; index += fields.length) {
    const key = `${types[snapshot.nodes[index + typeIndex]!]}:${String(snapshot.strings[snapshot.nodes[index + nameIndex]!]).slice(0, 50)}`;
    const entry = totals.get(key) ?? [0, 0];
    entry[0]++;
    entry[1] += snapshot.nodes[index + sizeIndex]!;
    totals.set(key, entry);
  }
  return totals;
}

const before = aggregate();
const keep: unknown[] = [];
for (let n = 0; n < calls; n++) {
  if (variant === "baseline") {
    const frame = JSON.parse(toolCallRequestText(1_000_000 + n, "hang")) as { request_id: string };
    const controller = new AbortController();
    keep.push(controller);
    void hangUntilAborted(controller.signal).then((value) => JSON.stringify({ request_id: frame.request_id, value }));
  } else if (variant === "signal") {
    const controller = new AbortController();
    void controller.signal;
    keep.push(controller);
  } else link.receive(toolCallRequestText(1_000_000 + n, variant === "toolrelay-ignore-signal" ? "ignore" : "hang"));
}
await new Promise((resolve) => setImmediate(resolve));
const after = aggregate();
const rows = [...after]
  .map(([key, [count, bytes]]) => [key, count - (before.get(key)?.[0] ?? 0), bytes - (before.get(key)?.[1] ?? 0)] as const)
  .filter(([, , bytes]) => bytes > calls * 4)
  .sort((a, b) => b[2] - a[2]);
let total = 0;
for (const [key, count, bytes] of rows) {
  total += bytes;
  console.log(`${(bytes / calls).toFixed(0).padStart(6)} B/call ${(count / calls).toFixed(2).padStart(6)} objects/call  ${key}`);
}
console.log(`total ${(total / calls).toFixed(0)} B per pending call (${variant}, ${calls} calls)`);
await session.close();
bundles.remove();
