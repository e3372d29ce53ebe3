/**
 * The layer check: every import of a source file against the layer table, and no import cycle
 * among the files, type-only imports included (a type cycle is a design cycle, even though the
 * build erases it). Pure: it takes the table and the tree and returns what is wrong.
 */
import { importGraph, type ImportEdge, type SourceTree } from "./import-graph.js";
import type { LayerRule } from "./layer-table.js";

/** One thing wrong, said so that the reader can fix it without running anything else. */
export interface LayerFinding {
  kind: "table" | "unlisted" | "unresolved" | "opaque" | "against-table" | "cycle";
  message: string;
}

/** A source root is `packages/<name>/src`: the names of a row's `may import` are folders under it. */
function scopeOf(folder: string): string {
  return folder.split("/").slice(0, 3).join("/");
}

/** The findings of `tree` against `rules`, in a stable order (table, files, imports, cycles). */
export function checkLayers(rules: readonly LayerRule[], tree: SourceTree): LayerFinding[] {
  const findings: LayerFinding[] = [];
  const rows = new Map(rules.map((rule) => [rule.folder, rule]));
  const rowOf = (path: string): LayerRule | undefined => {
    let best: LayerRule | undefined;
    for (const rule of rules) {
      const inside = path === rule.folder || path.startsWith(`${rule.folder}/`);
      if (inside && (best === undefined || rule.folder.length > best.folder.length)) best = rule;
    }
    return best;
  };
  // What each row may reach: rows of its own source root by name, and entry points.
  const allowedRows = new Map<string, Set<string>>();
  const allowedEntries = new Map<string, Set<string>>();
  for (const rule of rules) {
    const reachable = new Set<string>();
    const entries = new Set<string>();
    for (const name of rule.mayImport) {
      const folder = `${scopeOf(rule.folder)}/${name}`;
      if (rows.has(folder)) reachable.add(folder);
      else if (tree.entryPoints.has(name)) entries.add(name);
      else
        findings.push({
          kind: "table",
          message: `the layer table: ${rule.folder} may import "${name}", which is neither a row of ${scopeOf(rule.folder)} nor a published entry point`,
        });
    }
    allowedRows.set(rule.folder, reachable);
    allowedEntries.set(rule.folder, entries);
    if (![...tree.files.keys()].some((path) => rowOf(path) === rule)) {
      findings.push({ kind: "table", message: `the layer table names ${rule.folder}, which holds no source file` });
    }
  }
  const tableCycle = findCycles(new Map([...allowedRows].map(([folder, reachable]) => [folder, [...reachable]])));
  for (const { path } of tableCycle) findings.push({ kind: "table", message: `the layer table allows a cycle: ${path.join(" → ")}` });

  for (const path of tree.files.keys()) {
    if (rowOf(path) === undefined) findings.push({ kind: "unlisted", message: `${path} is in no row of the layer table` });
  }

  const { edges, opaque } = importGraph(tree);
  for (const site of opaque) {
    findings.push({
      kind: "opaque",
      message: `${site.from}:${site.line} imports a module named by an expression; the layer check needs a string literal`,
    });
  }
  for (const edge of edges) {
    const finding = judge(edge, rowOf, allowedRows, allowedEntries);
    if (finding !== undefined) findings.push(finding);
  }

  const graph = new Map<string, string[]>();
  const valueGraph = new Map<string, string[]>();
  for (const path of tree.files.keys()) {
    graph.set(path, []);
    valueGraph.set(path, []);
  }
  for (const edge of edges) {
    if (edge.to === undefined || !graph.has(edge.to)) continue;
    graph.get(edge.from)!.push(edge.to);
    if (!edge.typeOnly) valueGraph.get(edge.from)!.push(edge.to);
  }
  const inValueCycle = new Set(findCycles(valueGraph).flatMap((cycle) => cycle.members));
  for (const { members, path } of findCycles(graph)) {
    const typeOnly = members.some((member) => inValueCycle.has(member)) ? "" : " (type-only: it goes away without `import type`)";
    const among = members.length === path.length - 1 ? "" : ` (${members.length} files in all: ${members.join(", ")})`;
    findings.push({ kind: "cycle", message: `an import cycle${typeOnly}: ${path.join(" → ")}${among}` });
  }
  return findings;
}

function judge(
  edge: ImportEdge,
  rowOf: (path: string) => LayerRule | undefined,
  allowedRows: ReadonlyMap<string, ReadonlySet<string>>,
  allowedEntries: ReadonlyMap<string, ReadonlySet<string>>,
): LayerFinding | undefined {
  const where = `${edge.from}:${edge.line}`;
  if (edge.unresolved)
    return { kind: "unresolved", message: `${where} imports "${edge.specifier}", which names no source file or published entry point` };
  const from = rowOf(edge.from);
  if (from === undefined) return undefined; // reported as unlisted
  if (edge.data !== undefined) {
    // Data (a package's own package.json, for its version) is no layer; it stays inside its package.
    const home = scopeOf(from.folder).split("/").slice(0, 2).join("/");
    if (edge.data.startsWith(`${home}/`)) return undefined;
    return { kind: "against-table", message: `${where} imports "${edge.specifier}" (${edge.data}), a file outside ${home}` };
  }
  if (edge.entryPoint !== undefined) {
    if (allowedEntries.get(from.folder)!.has(edge.entryPoint)) return undefined;
    return against(edge, from, `the entry point ${edge.entryPoint}`, allowedRows, allowedEntries);
  }
  if (edge.to === undefined) return undefined; // outside the tree (node:, a dependency)
  const to = rowOf(edge.to);
  if (to === undefined || to === from || allowedRows.get(from.folder)!.has(to.folder)) return undefined;
  return against(edge, from, to.folder, allowedRows, allowedEntries);
}

function against(
  edge: ImportEdge,
  from: LayerRule,
  target: string,
  allowedRows: ReadonlyMap<string, ReadonlySet<string>>,
  allowedEntries: ReadonlyMap<string, ReadonlySet<string>>,
): LayerFinding {
  const allowed = [...allowedRows.get(from.folder)!].map((folder) => folder.slice(scopeOf(from.folder).length + 1));
  allowed.push(...allowedEntries.get(from.folder)!);
  const list = allowed.length === 0 ? "nothing" : allowed.join(", ");
  return {
    kind: "against-table",
    message: `${edge.from}:${edge.line} imports "${edge.specifier}" (${target}); the layer table lets ${from.folder} import ${list}`,
  };
}

/**
 * Every strongly connected component of `graph` that holds a cycle (Tarjan): its members, sorted,
 * and the shortest cycle through its first member, as a path that ends where it starts.
 */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): Array<{ members: string[]; path: string[] }> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const connect = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        connect(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return components
    .map((members) => ({ members, path: shortestCycle(graph, new Set(members), members[0]!) }))
    .sort((a, b) => a.members[0]!.localeCompare(b.members[0]!));
}

/** The shortest path from `start` back to itself inside `members` (breadth first). */
function shortestCycle(graph: ReadonlyMap<string, readonly string[]>, members: ReadonlySet<string>, start: string): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let step: string | undefined = node; step !== start && step !== undefined; step = previous.get(step)) path.splice(1, 0, step);
        return [...path, start];
      }
      if (!previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start, start];
}
