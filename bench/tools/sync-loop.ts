/**
 * The SDK's CPU per call with nothing else in the loop: a session on a BenchLink takes N requests
 * back to back, synchronously (the no-op tool answers in the same call), in rounds. Prints ns per
 * call per round; for comparing two versions of the hot path, and for `--cpu-prof`:
 *
 *   npx tsx bench/tools/sync-loop.ts [calls per round=100000] [rounds=5]
 */
import { buildSdkBundles } from "../harness/build-sdk.js";

const args = process.argv.slice(2).filter((argument) => /^\d+$/.test(argument));
const bundles = await buildSdkBundles();
const calls = Number(args[0] ?? 100_000);
const rounds = Number(args[1] ?? 5);
const { createSessionOnLink } = await import("../harness/sdk.js");
const { BenchLink, toolCallRequestText } = await import("../harness/bench-link.js");
const { noopTool } = await import("../harness/clients.js");

const link = new BenchLink();
const session = await createSessionOnLink({ backend: { kind: "link", link }, agent: { id: "agent-bench" }, tools: [noopTool] });
const texts = Array.from({ length: calls * rounds }, (_, index) => toolCallRequestText(index));
const perRound: string[] = [];
for (let round = 0; round < rounds; round++) {
  const before = link.responses;
  const started = process.hrtime.bigint();
  for (let index = round * calls; index < (round + 1) * calls; index++) link.receive(texts[index]!);
  const elapsed = Number(process.hrtime.bigint() - started);
  if (link.responses - before !== calls) throw new Error(`round ${round}: ${link.responses - before} answers for ${calls} calls`);
  perRound.push((elapsed / calls).toFixed(0));
}
await session.close();
bundles.remove();
console.log(`ns per call, ${calls} calls per round: ${perRound.join(" ")}`);
