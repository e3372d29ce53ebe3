/**
 * Summarise a V8 `.cpuprofile` (from `node --cpu-prof`): self and inclusive
 * time per function, top N, with file:line — to find where a benchmark spends
 * its time.
 *
 *   npx tsx bench/tools/cpu-profile-summary.ts <file.cpuprofile> [top=30] [filter]
 *
 * `filter` keeps only functions whose URL contains it (e.g. `/src/`).
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface FunctionCost {
  name: string;
  location: string;
  selfMs: number;
  totalMs: number;
}

/** Self and inclusive milliseconds per function (recursion counted once per stack). */
export function summariseProfile(profile: Profile): { totalMs: number; functions: FunctionCost[] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfTime = new Map<number, number>();
  for (let index = 0; index < profile.samples.length; index++) {
    const id = profile.samples[index]!;
    selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
  }
  const keyOf = (node: ProfileNode) => {
    const frame = node.callFrame;
    const file = frame.url.replace(/^file:\/\//, "").replace(/^.*\/work\/main\//, "");
    return `${frame.functionName || "(anonymous)"}\u0000${file}:${frame.lineNumber + 1}`;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  for (const [id, micros] of selfTime) {
    const node = byId.get(id)!;
    self.set(keyOf(node), (self.get(keyOf(node)) ?? 0) + micros);
    const seen = new Set<string>();
    for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
      const key = keyOf(byId.get(current)!);
      if (seen.has(key)) continue;
      seen.add(key);
      total.set(key, (total.get(key) ?? 0) + micros);
    }
  }
  const functions = [...total.keys()].map((key) => {
    const [name, location] = key.split("\u0000") as [string, string];
    return { name, location, selfMs: (self.get(key) ?? 0) / 1000, totalMs: (total.get(key) ?? 0) / 1000 };
  });
  return { totalMs: (profile.endTime - profile.startTime) / 1000, functions };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, topText, filter] = process.argv.slice(2);
  if (!file) {
    console.error("usage: cpu-profile-summary.ts <file.cpuprofile> [top] [filter]");
    process.exit(2);
  }
  const top = Number(topText ?? 30);
  const { totalMs, functions } = summariseProfile(JSON.parse(readFileSync(file, "utf8")) as Profile);
  const kept = filter ? functions.filter((entry) => entry.location.includes(filter)) : functions;
  const line = (entry: FunctionCost) =>
    `${entry.selfMs.toFixed(1).padStart(9)} ${entry.totalMs.toFixed(1).padStart(9)}  ${entry.name}  ${entry.location}`;
  console.log(`profile: ${totalMs.toFixed(0)} ms\n\n   self ms  total ms  — by self time`);
  for (const entry of [...kept].sort((a, b) => b.selfMs - a.selfMs).slice(0, top)) console.log(line(entry));
  console.log(`\n   self ms  total ms  — by inclusive time`);
  for (const entry of [...kept].sort((a, b) => b.totalMs - a.totalMs).slice(0, top)) console.log(line(entry));
}
