/**
 * The layer table of CONTRIBUTING.md ("Layers") holds for the source of both packages: every
 * import is one the table allows, every file is in a row, and no files import each other in a
 * cycle, type-only imports included. layer-check.test.ts shows the check can fail.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readSourceTree } from "./import-graph.js";
import { checkLayers } from "./layer-check.js";
import { parseLayerTable } from "./layer-table.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

describe("the layer table (CONTRIBUTING.md, Layers)", () => {
  it("reads the source of every workspace package, the SDK and the relay among them, and their entry points", () => {
    const tree = readSourceTree(root);
    const packages = new Set([...tree.files.keys()].map((path) => path.split("/").slice(0, 3).join("/")));
    expect([...packages]).toEqual(expect.arrayContaining(["packages/toolrelay/src", "packages/relay/src"]));
    expect(tree.files.size).toBeGreaterThan(200);
    expect(tree.entryPoints.get("toolrelay")).toBe("packages/toolrelay/src/index.ts");
    expect(tree.entryPoints.get("toolrelay/protocol")).toBe("packages/toolrelay/src/protocol/index.ts");
    expect(tree.entryPoints.get("@toolrelay/relay")).toBe("packages/relay/src/index.ts");
  });

  it("holds for every import of every source file, and no import cycle, type-only included", () => {
    const rules = parseLayerTable(readFileSync(`${root}CONTRIBUTING.md`, "utf8"));
    const tree = readSourceTree(root);
    expect(checkLayers(rules, tree).map((finding) => finding.message)).toEqual([]);
  });
});
