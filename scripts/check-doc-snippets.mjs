#!/usr/bin/env node
// Type-checks every ```ts / ```typescript block of README.md, CONTRIBUTING.md and docs/*.md
// against the package, so the docs cannot drift from the API. Each block is its own module
// (top-level `await` and `await using` are fine) that imports the package by its public names
// (`toolrelay`, `toolrelay/testing`, …; every subpath of package.json `exports`, mapped to its
// source) plus anything in this repository's node_modules (`zod`, `vitest`).
//
// Convention (CONTRIBUTING.md, "Code in the docs"):
//   ```ts            compiles on its own: it declares or imports every name it uses
//   ```ts continued  compiles together with the blocks before it in the same file, back to the
//                    last block that is not `continued` (a walkthrough built step by step)
//   ```ts fragment   deliberately not a program (a signature, one option, a shape): not compiled
//
// Usage: node scripts/check-doc-snippets.mjs [--except a.md,b.md] [file.md ...]
//   --except leaves whole files out (named in the output): for a page that is being rewritten.
// Prints each error at its line in the Markdown file; exits 1 when any block fails.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { fencedBlocks } from "./markdown-blocks.mjs";

const require = createRequire(import.meta.url);
const ts = require("typescript");
const root = dirname(dirname(fileURLToPath(import.meta.url)));
/** The published packages: every subpath of each maps to its source for the doc programs. */
const packageFolders = ["packages/toolrelay", "packages/relay"];

/** The Markdown files whose code is checked. */
function defaultFiles() {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join("docs", name));
  return ["README.md", "packages/relay/README.md", "CONTRIBUTING.md", ...docs].filter((file) => existsSync(join(root, file)));
}

const checked = (block) => (block.language === "ts" || block.language === "typescript") && !/\bfragment\b/.test(block.meta);

const argv = process.argv.slice(2);
const exceptIndex = argv.indexOf("--except");
const excepted = exceptIndex === -1 ? [] : argv.splice(exceptIndex, 2)[1].split(",").filter(Boolean);
const files = (argv.length > 0 ? argv : defaultFiles()).filter((file) => !excepted.includes(file));
if (excepted.length > 0) console.log(`check-doc-snippets: NOT checked this run: ${excepted.join(", ")}`);
const workDir = join(root, "node_modules", ".cache", "toolrelay-doc-snippets");
rmSync(workDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });

// A header line makes every file a module; offsets below account for it.
const header = "export {};\n";
/** Each file is a chain of blocks: `{ doc, segments: [{ firstLine, fileLine, lines }] }`. */
const origins = new Map();
let fragments = 0;
let blockCount = 0;
for (const doc of files) {
  let chain;
  for (const block of fencedBlocks(readFileSync(join(root, doc), "utf8"))) {
    if (block.language !== "ts" && block.language !== "typescript") continue;
    if (!checked(block)) {
      fragments += 1;
      continue;
    }
    blockCount += 1;
    if (!/\bcontinued\b/.test(block.meta) || chain === undefined) {
      chain = { doc, file: join(workDir, `${doc.replace(/[\\/.]/g, "_")}_${block.firstLine}.ts`), code: header, segments: [] };
      origins.set(chain.file, chain);
    }
    const fileLine = chain.code.split("\n").length - 1;
    chain.segments.push({ firstLine: block.firstLine, fileLine, lines: block.code.split("\n").length });
    chain.code += `${block.code}\n`;
  }
}
for (const chain of origins.values()) writeFileSync(chain.file, chain.code);

/** The Markdown line of a 0-based line of a generated file. */
function markdownLine(chain, line) {
  const segment = chain.segments.findLast((candidate) => candidate.fileLine <= line) ?? chain.segments[0];
  return segment.firstLine + (line - segment.fileLine);
}

const paths = {};
for (const [folder, manifest] of packageFolders.map((folder) => [
  folder,
  JSON.parse(readFileSync(join(root, folder, "package.json"), "utf8")),
]))
  for (const [key, target] of Object.entries(manifest.exports)) {
    if (key === "./package.json" || key.includes("*")) continue;
    const specifier = key === "." ? manifest.name : `${manifest.name}/${key.slice(2)}`;
    const types = target.import?.types ?? target.types;
    paths[specifier] = [join(root, folder, types.replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$/, ".ts"))];
  }
const options = {
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2022.d.ts", "lib.esnext.disposable.d.ts", "lib.dom.d.ts"],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  noUncheckedIndexedAccess: true,
  // On in `tsc --init` since TypeScript 5.9: the docs' programs must compile for such a project
  // (`token: process.env.X` needs every optional option typed `?: T | undefined`).
  exactOptionalPropertyTypes: true,
  skipLibCheck: true,
  noEmit: true,
  types: ["node"],
  typeRoots: [join(root, "node_modules", "@types")],
  esModuleInterop: true,
  paths,
};
const program = ts.createProgram([...origins.keys()], options);
const diagnostics = ts.getPreEmitDiagnostics(program);
const failedBlocks = new Set();
let errors = 0;
const packageSources = join(root, "packages");
for (const diagnostic of diagnostics) {
  // The packages' own sources are reached through `paths` only to type the docs' programs; they
  // are type-checked with the repository's settings by `npm run typecheck`, and users compile
  // against their declarations, so a diagnostic inside them is not the docs'.
  if (diagnostic.file?.fileName.startsWith(packageSources)) continue;
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
  const origin = diagnostic.file ? origins.get(diagnostic.file.fileName) : undefined;
  if (diagnostic.file && origin && diagnostic.start !== undefined) {
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    console.error(`${origin.doc}:${markdownLine(origin, line)}:${character + 1} TS${diagnostic.code}: ${message}`);
    failedBlocks.add(diagnostic.file.fileName);
  } else {
    const where = diagnostic.file ? relative(root, diagnostic.file.fileName) : "tsc";
    console.error(`${where}: TS${diagnostic.code}: ${message}`);
  }
  errors += 1;
}
rmSync(workDir, { recursive: true, force: true });
console.log(
  `check-doc-snippets: ${blockCount} TypeScript blocks in ${origins.size} programs, ${origins.size - failedBlocks.size} compile; ${fragments} marked fragment (not compiled); ${files.length} files`,
);
if (errors > 0) {
  console.error(`check-doc-snippets: ${errors} error(s) in ${failedBlocks.size} block(s)`);
  process.exit(1);
}
