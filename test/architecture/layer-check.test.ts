/**
 * The layer check itself, on a small tree held in memory: it must report an import against the
 * table (static, dynamic, re-export, a relative path into another package), a type-only cycle, a
 * file in no row, an unresolved import and a table it cannot read — or the architecture test
 * (layers.test.ts) could pass while checking nothing.
 */
import { describe, expect, it } from "vitest";
import { importsOf, type SourceTree } from "./import-graph.js";
import { checkLayers, findCycles } from "./layer-check.js";
import { parseLayerTable } from "./layer-table.js";

const TABLE = `# Contributing

## Layers

Some prose.

| folder | what | may import |
| --- | --- | --- |
| \`packages/core/src/base\` | the bottom | — |
| \`packages/core/src/types.ts\` | shared types | \`base\` |
| \`packages/core/src/top\` | the top | \`base\`, \`types.ts\` |
| \`packages/core/src/index.ts\` | the entry point | \`base\`, \`top\` |
| \`packages/core/src/protocol\` | a published subpath | \`base\` |
| \`packages/app/src\` | another package | \`core/protocol\` |

## The next section

| folder | may import |
| --- | --- |
| \`packages/ignored/src\` | — |
`;

function tree(files: Record<string, string>): SourceTree {
  return {
    files: new Map(Object.entries(files)),
    entryPoints: new Map([
      ["core", "packages/core/src/index.ts"],
      ["core/protocol", "packages/core/src/protocol/index.ts"],
    ]),
  };
}

/** A tree that keeps the table: every kind of import, each allowed. */
const CLEAN = {
  "packages/core/src/base/a.ts": `export const a = 1;\nexport type A = number;\n`,
  "packages/core/src/base/b.ts": `import { a } from "./a.js";\nexport const b = a + 1;\n`,
  "packages/core/src/types.ts": `import type { A } from "./base/a.js";\nexport interface T { a: A }\n`,
  "packages/core/src/top/c.ts": `import type { T } from "../types.js";\nexport * from "../base/b.js";\nexport async function c(): Promise<T> { const { a } = await import("../base/a.js"); return { a }; }\n`,
  "packages/core/src/top/d.ts": `import fs from "node:fs";\nexport type F = typeof fs;\nexport type C = import("./c.js").T;\n`,
  "packages/core/src/index.ts": `export { c } from "./top/c.js";\nexport { b } from "./base/index.js";\n`,
  "packages/core/src/base/index.ts": `export { b } from "./b.js";\n`,
  "packages/core/src/protocol/index.ts": `export { a } from "../base/a.js";\n`,
  "packages/app/src/main.ts": `import { a } from "core/protocol";\nimport { z } from "zod";\nexport const m = [a, z];\n`,
};

describe("parseLayerTable", () => {
  it("reads the rows of the table under ## Layers, and nothing after the section", () => {
    expect(parseLayerTable(TABLE)).toEqual([
      { folder: "packages/core/src/base", mayImport: [] },
      { folder: "packages/core/src/types.ts", mayImport: ["base"] },
      { folder: "packages/core/src/top", mayImport: ["base", "types.ts"] },
      { folder: "packages/core/src/index.ts", mayImport: ["base", "top"] },
      { folder: "packages/core/src/protocol", mayImport: ["base"] },
      { folder: "packages/app/src", mayImport: ["core/protocol"] },
    ]);
  });

  it("refuses a document it cannot read, rather than checking nothing", () => {
    expect(() => parseLayerTable("# Contributing\n\n## Style\n")).toThrow(/no "## Layers" section/);
    expect(() => parseLayerTable("## Layers\n\n```text\ninternal  timers\n```\n")).toThrow(/no table with a "folder" column/);
    expect(() => parseLayerTable("## Layers\n\n| folder | what |\n| --- | --- |\n| `a` | b |\n")).toThrow(/no "may import" column/);
    expect(() => parseLayerTable("## Layers\n\n| folder | may import |\n| --- | --- |\n\nprose\n")).toThrow(/no rows/);
    expect(() => parseLayerTable("## Layers\n\n| folder | may import |\n| --- | --- |\n| a b | — |\n")).toThrow(/a row without a folder/);
  });
});

describe("importsOf", () => {
  it("finds import, import type, export from, side-effect, dynamic import(), require() and import() types, with their lines", () => {
    const text = [
      `import { a } from "./a.js";`,
      `import type { B } from "./b.js";`,
      `export { c } from "./c.js";`,
      `export type { D } from "./d.js";`,
      `export * as e from "./e.js";`,
      `import "./f.js";`,
      `const g = await import("./g.js");`,
      `const h = require("./h.js");`,
      `type I = import("./i.js").I;`,
      `import j = require("./j.js");`,
      `const k = await import(name);`,
      `// import { no } from "./comment.js";`,
      'const text = `import { no } from "./string.js"`;',
    ].join("\n");
    const found = importsOf("x.ts", text);
    expect(found.imports).toEqual([
      { specifier: "./a.js", line: 1, typeOnly: false },
      { specifier: "./b.js", line: 2, typeOnly: true },
      { specifier: "./c.js", line: 3, typeOnly: false },
      { specifier: "./d.js", line: 4, typeOnly: true },
      { specifier: "./e.js", line: 5, typeOnly: false },
      { specifier: "./f.js", line: 6, typeOnly: false },
      { specifier: "./g.js", line: 7, typeOnly: false },
      { specifier: "./h.js", line: 8, typeOnly: false },
      { specifier: "./i.js", line: 9, typeOnly: true },
      { specifier: "./j.js", line: 10, typeOnly: false },
    ]);
    expect(found.opaque).toEqual([11]);
  });
});

describe("checkLayers", () => {
  const rules = parseLayerTable(TABLE);

  it("passes a tree that keeps the table", () => {
    expect(checkLayers(rules, tree(CLEAN))).toEqual([]);
  });

  it("reports an import against the table (static, dynamic, re-exported, type-only) with file, line and what the row allows", () => {
    const findings = checkLayers(
      rules,
      tree({
        ...CLEAN,
        "packages/core/src/base/wrong.ts": `export const x = 1;\nimport { c } from "../top/c.js";\n`,
        "packages/core/src/base/late.ts": `export async function l() {\n  return import("../top/d.js");\n}\n`,
        "packages/core/src/base/again.ts": `export * from "../types.js";\n`,
        "packages/core/src/protocol/kind.ts": `import type { T } from "../types.js";\nexport type K = T;\n`,
      }),
    );
    expect(findings).toEqual([
      {
        kind: "against-table",
        message: `packages/core/src/base/again.ts:1 imports "../types.js" (packages/core/src/types.ts); the layer table lets packages/core/src/base import nothing`,
      },
      {
        kind: "against-table",
        message: `packages/core/src/base/late.ts:2 imports "../top/d.js" (packages/core/src/top); the layer table lets packages/core/src/base import nothing`,
      },
      {
        kind: "against-table",
        message: `packages/core/src/base/wrong.ts:2 imports "../top/c.js" (packages/core/src/top); the layer table lets packages/core/src/base import nothing`,
      },
      {
        kind: "against-table",
        message: `packages/core/src/protocol/kind.ts:1 imports "../types.js" (packages/core/src/types.ts); the layer table lets packages/core/src/protocol import base`,
      },
    ]);
  });

  it("lets another package in only through the entry points its row names: a relative path into the source, or another entry point, is against the table", () => {
    const findings = checkLayers(
      rules,
      tree({
        ...CLEAN,
        "packages/app/src/sneak.ts": `import { a } from "../../core/src/base/a.js";\nimport { c } from "core";\nimport { t } from "core/src/types.js";\nexport const s = [a, c, t];\n`,
      }),
    );
    expect(findings.map((finding) => finding.message)).toEqual([
      `packages/app/src/sneak.ts:1 imports "../../core/src/base/a.js" (packages/core/src/base); the layer table lets packages/app/src import core/protocol`,
      `packages/app/src/sneak.ts:2 imports "core" (the entry point core); the layer table lets packages/app/src import core/protocol`,
      `packages/app/src/sneak.ts:3 imports "core/src/types.js", which names no source file or published entry point`,
    ]);
  });

  it("lets a file import its own package's data (package.json), not another package's", () => {
    const findings = checkLayers(
      rules,
      tree({
        ...CLEAN,
        "packages/core/src/top/version.ts": `import manifest from "../../package.json" with { type: "json" };\nexport const v = manifest.version;\n`,
        "packages/app/src/version.ts": `import manifest from "../../core/package.json" with { type: "json" };\nexport const v = manifest.version;\n`,
      }),
    );
    expect(findings.map((finding) => finding.message)).toEqual([
      `packages/app/src/version.ts:1 imports "../../core/package.json" (packages/core/package.json), a file outside packages/app`,
    ]);
  });

  it("reports an import cycle, a type-only one too, by its shortest path and all its files", () => {
    const findings = checkLayers(
      rules,
      tree({
        ...CLEAN,
        "packages/core/src/top/p.ts": `import type { Q } from "./q.js";\nexport interface P { q: Q }\n`,
        "packages/core/src/top/q.ts": `import type { R } from "./r.js";\nexport interface Q { r: R }\n`,
        "packages/core/src/top/r.ts": `import type { P } from "./p.js";\nimport type { Q } from "./q.js";\nexport interface R { p: P; q: Q }\n`,
        "packages/core/src/top/s.ts": `import { t } from "./t.js";\nexport const s = () => t;\n`,
        "packages/core/src/top/t.ts": `import { s } from "./s.js";\nexport const t = () => s;\n`,
      }),
    );
    expect(findings).toEqual([
      {
        kind: "cycle",
        message:
          "an import cycle (type-only: it goes away without `import type`): packages/core/src/top/p.ts → packages/core/src/top/q.ts → packages/core/src/top/r.ts → packages/core/src/top/p.ts",
      },
      { kind: "cycle", message: "an import cycle: packages/core/src/top/s.ts → packages/core/src/top/t.ts → packages/core/src/top/s.ts" },
    ]);
  });

  it("names a cycle's other files when its shortest path does not pass them all", () => {
    const [finding] = checkLayers(
      rules,
      tree({
        ...CLEAN,
        "packages/core/src/top/u.ts": `import type { V } from "./v.js";\nimport type { W } from "./w.js";\nexport type U = V | W;\n`,
        "packages/core/src/top/v.ts": `import type { U } from "./u.js";\nexport type V = U[];\n`,
        "packages/core/src/top/w.ts": `import type { V } from "./v.js";\nexport type W = V[];\n`,
      }),
    );
    expect(finding?.message).toBe(
      "an import cycle (type-only: it goes away without `import type`): packages/core/src/top/u.ts → packages/core/src/top/v.ts → packages/core/src/top/u.ts (3 files in all: packages/core/src/top/u.ts, packages/core/src/top/v.ts, packages/core/src/top/w.ts)",
    );
  });

  it("reports a file in no row, an import that resolves to nothing, an import it cannot read, and a table that names what is not there", () => {
    const findings = checkLayers(
      [...rules, { folder: "packages/core/src/gone", mayImport: ["base", "nowhere"] }],
      tree({
        ...CLEAN,
        "packages/core/src/extra/e.ts": `export const e = 1;\n`,
        "packages/core/src/top/missing.ts": `import { m } from "./not-there.js";\nexport const n = m;\n`,
        "packages/core/src/top/opaque.ts": `const name = "./c.js";\nexport const o = await import(name);\n`,
      }),
    );
    expect(findings).toEqual([
      {
        kind: "table",
        message: `the layer table: packages/core/src/gone may import "nowhere", which is neither a row of packages/core/src nor a published entry point`,
      },
      { kind: "table", message: "the layer table names packages/core/src/gone, which holds no source file" },
      { kind: "unlisted", message: "packages/core/src/extra/e.ts is in no row of the layer table" },
      {
        kind: "opaque",
        message: "packages/core/src/top/opaque.ts:2 imports a module named by an expression; the layer check needs a string literal",
      },
      {
        kind: "unresolved",
        message: `packages/core/src/top/missing.ts:1 imports "./not-there.js", which names no source file or published entry point`,
      },
    ]);
  });

  it("refuses a table whose rows allow each other (dependencies point one way)", () => {
    const looping = rules.map((rule) => (rule.folder === "packages/core/src/base" ? { ...rule, mayImport: ["top"] } : rule));
    expect(checkLayers(looping, tree(CLEAN))).toContainEqual({
      kind: "table",
      message: "the layer table allows a cycle: packages/core/src/base → packages/core/src/top → packages/core/src/base",
    });
  });
});

describe("findCycles", () => {
  it("finds a self-import and leaves a chain alone", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", []],
      ["d", ["d"]],
    ]);
    expect(findCycles(graph)).toEqual([{ members: ["d"], path: ["d", "d"] }]);
  });
});
