import { readFileSync } from "node:fs";
const [file, target, ...marks] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file!, "utf8"));
const byId = new Map(p.nodes.map((n: any) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map<number, number>();
p.samples.forEach((id: number, i: number) => self.set(id, (self.get(id) ?? 0) + p.timeDeltas[i]));
const out = new Map<string, number>();
for (const [id, us] of self) {
  const n: any = byId.get(id);
  if (n.callFrame.functionName !== target) continue;
  let label = "other";
  for (let c: number | undefined = id; c !== undefined; c = parent.get(c)) {
    const f: any = (byId.get(c) as any).callFrame;
    const m = marks.find((mk) => f.url.includes(mk) || f.functionName === mk);
    if (m) { label = m; break; }
  }
  out.set(label, (out.get(label) ?? 0) + us);
}
for (const [k, v] of out) console.log(k, (v / 1000).toFixed(1), "ms");
