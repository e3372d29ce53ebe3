/**
 * Every relative link in a packed Markdown file points at a file in the same tarball (issue: the
 * packed README linked four files the tarball left out). Packs each package for real
 * (`npm pack --dry-run`, which runs its prepack: scripts/copy-package-files.mjs) and reads the
 * Markdown as it was packed.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { posix } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error a plain .mjs script without declarations
import { REPOSITORY_BLOB, rewriteLinks } from "../../scripts/copy-package-files.mjs";

const root = new URL("../../", import.meta.url);

function packedFiles(folder: string): string[] {
  const output = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts=false"], {
    cwd: new URL(folder, root),
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  const [report] = JSON.parse(output.slice(output.indexOf("[\n"), output.lastIndexOf("\n]") + 2)) as Array<{
    files: Array<{ path: string }>;
  }>;
  return report!.files.map((file) => file.path);
}

function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\((?!https?:|mailto:|#)([^)\s]+)\)/g)]
    .map((match) => match[1]!.split("#")[0]!)
    .filter((path) => path !== "");
}

describe("packed Markdown links", () => {
  for (const folder of ["packages/toolrelay/", "packages/relay/"]) {
    it(`${folder}: every relative link of every packed .md file is in the tarball`, () => {
      const files = packedFiles(folder);
      const markdown = files.filter((file) => file.endsWith(".md"));
      expect(markdown).toContain("README.md");
      const broken: string[] = [];
      for (const file of markdown) {
        const text = readFileSync(new URL(`${folder}${file}`, root), "utf8");
        for (const link of relativeLinks(text)) {
          const target = posix.normalize(posix.join(posix.dirname(file), link));
          if (!files.includes(target)) broken.push(`${file} → ${link}`);
        }
      }
      expect(broken).toEqual([]);
    }, 60_000);
  }

  it("rewrites a link whose target is not shipped into the repository's, keeping the anchor, and leaves shipped ones", () => {
    const shipped = new Set(["README.md", "docs/tools.md"]);
    const text = "[tools](docs/tools.md#results) [relay](docs/relay.md#fairness) [web](https://example.org) [here](#top)";
    expect(rewriteLinks(text, "README.md", shipped)).toBe(
      `[tools](docs/tools.md#results) [relay](${REPOSITORY_BLOB}docs/relay.md#fairness) [web](https://example.org) [here](#top)`,
    );
    expect(rewriteLinks("[x](../CONTRIBUTING.md)", "docs/tools.md", shipped)).toBe(`[x](${REPOSITORY_BLOB}CONTRIBUTING.md)`);
  });
});
