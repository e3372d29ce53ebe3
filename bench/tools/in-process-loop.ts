/**
 * The SDK's own cost per tool call, without sockets: a session on a BenchLink
 * (`{ kind: "link" }`; requests decoded with decodeFrame, responses encoded with
 * encodeFrame) answers N sequential no-op calls. Prints p50/p90/p99 per slice of
 * the run, so a cost that grows with the number of calls shows up. Profile it:
 *
 *   npx tsx bench/tools/in-process-loop.ts [calls=100000]
 *   node --cpu-prof --cpu-prof-interval 50 --import tsx bench/tools/in-process-loop.ts 60000
 *   npx tsx bench/tools/cpu-profile-summary.ts CPU.*.cpuprofile 40 sdk.mjs
 *
 * Measures the esbuild bundle (as shipped), like `npm run bench`; `--source` for packages/toolrelay/src/ via tsx.
 */
import { buildSdkBundles } from "../harness/build-sdk.js";

const args = process.argv.slice(2);
const bundles = args.includes("--source") ? undefined : await buildSdkBundles();
const calls = Number(args.find((argument) => /^\d+$/.test(argument)) ?? 100_000);
const { createSessionOnLink, sdkOrigin } = await import("../harness/sdk.js");
const { BenchLink, toolCallRequestText } = await import("../harness/bench-link.js");
const { noopTool } = await import("../harness/clients.js");
const { summarize } = await import("../harness/stats.js");

const link = new BenchLink();
const session = await createSessionOnLink({ backend: { kind: "link", link }, agent: { id: "agent-bench" }, tools: [noopTool] });
let answered: (() => void) | undefined;
link.onResponse = () => answered?.();
const samples = new Float64Array(calls);
for (let index = 0; index < calls; index++) {
  const done = new Promise<void>((resolve) => (answered = resolve));
  const started = process.hrtime.bigint();
  link.receive(toolCallRequestText(index));
  await done;
  samples[index] = Number(process.hrtime.bigint() - started) / 1000;
}
await session.close();
bundles?.remove();
const slices = 5;
console.log(`SDK (${sdkOrigin}) per call, µs, by slice of ${calls} sequential calls:`);
for (let slice = 0; slice < slices; slice++) {
  const from = Math.floor((slice * calls) / slices);
  const to = Math.floor(((slice + 1) * calls) / slices);
  const summary = summarize(Array.from(samples.subarray(from, to)));
  console.log(
    `  calls ${from}–${to}: p50 ${summary.p50.toFixed(1)}  p90 ${summary.p90.toFixed(1)}  p99 ${summary.p99.toFixed(1)}  mean ${summary.mean.toFixed(1)}`,
  );
}
