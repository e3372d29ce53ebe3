// prepack of each published package (packages/<name>): copies the repository's files that the
// package ships but the repository keeps once at its root — README, LICENSE, notices, the
// user-facing docs — into the package folder (git-ignored copies), and rewrites every relative
// Markdown link whose target the tarball leaves out into a link to the repository, so no link in
// a packed file points at nothing.
//   node scripts/copy-package-files.mjs toolrelay|relay
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, normalize, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const REPOSITORY_BLOB = "https://github.com/toolrelay/toolrelay/blob/main/";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** What each package ships from the root: [from (repository path), to (package path)]. */
export function packageFiles(name) {
  const userDocs = readdirSync(join(root, "docs"))
    .filter((file) => file.endsWith(".md"))
    .map((file) => `docs/${file}`);
  if (name === "toolrelay") {
    const internal = new Set([
      "docs/performance.md",
      "docs/reliability.md",
      "docs/reliability-model-and-security.md",
      "docs/protocol.md",
      "docs/relay.md",
    ]);
    return [
      ["README.md", "README.md"],
      ["LICENSE", "LICENSE"],
      ["THIRD-PARTY-NOTICES.md", "THIRD-PARTY-NOTICES.md"],
      ...userDocs.filter((doc) => !internal.has(doc)).map((doc) => [doc, doc]),
    ];
  }
  if (name === "relay")
    return [
      ["LICENSE", "LICENSE"],
      ["docs/relay.md", "docs/relay.md"],
    ];
  throw new Error(`unknown package "${name}" (toolrelay or relay)`);
}

/** Rewrite `](target)` links of a Markdown file at `from` whose target is not shipped. */
export function rewriteLinks(markdown, from, shipped) {
  return markdown.replace(/\]\((?!https?:|mailto:|#)([^)\s]+)\)/g, (whole, target) => {
    const [path, anchor = ""] = target.split("#");
    if (path === "") return whole;
    const resolved = posix.normalize(posix.join(posix.dirname(from), path));
    if (shipped.has(resolved)) return whole;
    return `](${REPOSITORY_BLOB}${resolved}${anchor === "" ? "" : `#${anchor}`})`;
  });
}

function main() {
  const name = process.argv[2];
  const files = packageFiles(name);
  const packageDir = join(root, "packages", name);
  rmSync(join(packageDir, "docs"), { recursive: true, force: true });
  const shipped = new Set(files.map(([from]) => from));
  for (const [from, to] of files) {
    const target = join(packageDir, to);
    mkdirSync(dirname(target), { recursive: true });
    if (from.endsWith(".md")) writeFileSync(target, rewriteLinks(readFileSync(join(root, from), "utf8"), from, shipped));
    else copyFileSync(join(root, from), target);
  }
  if (!existsSync(join(packageDir, "README.md"))) throw new Error(`packages/${name} has no README.md`);
  process.stdout.write(`copied ${files.length} files into ${relative(root, packageDir) || "."}\n`);
}

if (normalize(process.argv[1] ?? "") === fileURLToPath(import.meta.url)) main();
