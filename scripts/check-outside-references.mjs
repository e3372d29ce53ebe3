#!/usr/bin/env node
// Fails when a file of the repository names something outside it: a design note that is not in
// the repository, a path on some machine (a work folder, a literal temporary folder, a home
// folder), or a `docs/protocol.md#anchor` that no heading of docs/protocol.md defines. Code and
// docs must cite only what a reader of this repository has: docs/protocol.md, docs/*.md.
//
// Scans every file git knows (tracked and new, not ignored) under src, docs, examples, test,
// integration, bench, scripts, .ci and at the top level. Recorded fixtures keep the one
// placeholder their recorder writes for the peer's temporary HOME.
//
// Usage: node scripts/check-outside-references.mjs   (prints file:line: what; exits 1 on any hit)
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const self = relative(root, fileURLToPath(import.meta.url));
const folders = ["packages/", "docs/", "examples/", "test/", "integration/", "bench/", "scripts/", ".ci/"];
const binary = /\.(png|jpe?g|gif|ico|woff2?|tgz|gz|zip)$/i;

const noteNames = ["PROTOCOL", "DESIGN", "RELIABILITY", "RUNTIME-FACTS", "CONVENTIONS", "REAL-PEER", "REAL-LISTENER"];
const rules = [
  { what: "a design note outside the repository", pattern: new RegExp(`\\b(?:${noteNames.join("|")})\\.md\\b`) },
  { what: "a folder outside the repository", pattern: /\.\.\/shared\b|(?:^|[\s"'`(])shared\/[A-Z-]+\.md/ },
  // docs/protocol.md is cited by heading anchor (docs/protocol.md#external-tool-calls), never by
  // the section numbers of a note outside the repository.
  // A section of a public standard keeps its number: "RFC 6455 §5.2".
  { what: "a section number of a note outside the repository", pattern: /(?<!RFC \d+,? )§\s?\d+(?:\.\d+)*/ },
  { what: "a machine path (work folder)", pattern: /\/work\// },
  {
    what: "a machine path (home folder)",
    pattern: /(?:^|[^\w.~-])(?:\/root\/|\/home\/[a-z_][\w-]*|\/Users\/[A-Za-z][\w-]*|[A-Z]:\\Users\\)/,
  },
  // A literal temporary folder. Recorded fixtures may keep their recorder's placeholders
  // (integration/support/recording-placeholders.ts).
  {
    what: "a machine path (literal temporary folder)",
    pattern: /(?:^|[^\w.-])\/tmp\/(?!toolrelay-letta-home-XXXXXX\b|letta-background-XXXXXX\b)[\w.-]+/,
  },
];

const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter(Boolean)
  .filter((file) => (folders.some((folder) => file.startsWith(folder)) || !file.includes("/")) && !binary.test(file))
  .filter((file) => file !== self && !file.startsWith("test/letta-peer/node_modules"));

const anchors = protocolAnchors();
const hits = [];
for (const file of files) {
  let text;
  try {
    text = readFileSync(join(root, file), "utf8");
  } catch {
    continue; // deleted in the work tree
  }
  const lines = text.split("\n");
  lines.forEach((line, index) => {
    for (const rule of rules) {
      const match = rule.pattern.exec(line);
      if (match) hits.push(`${file}:${index + 1}: ${rule.what}: ${match[0].trim()}`);
    }
    for (const match of line.matchAll(/docs\/protocol\.md#([\w-]+)/g)) {
      if (!anchors.has(match[1])) hits.push(`${file}:${index + 1}: docs/protocol.md has no heading #${match[1]}`);
    }
  });
}

/** GitHub's anchors of the headings of docs/protocol.md. */
function protocolAnchors() {
  const result = new Set();
  let text = "";
  try {
    text = readFileSync(join(root, "docs", "protocol.md"), "utf8");
  } catch {
    return result;
  }
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (heading)
      result.add(
        heading[1]
          .trim()
          .toLowerCase()
          .replace(/[^\w\- ]/g, "")
          .replace(/ /g, "-"),
      );
  }
  return result;
}

if (hits.length > 0) {
  for (const hit of hits) console.error(hit);
  const byFile = new Set(hits.map((hit) => hit.slice(0, hit.indexOf(":"))));
  console.error(`\ncheck-outside-references: ${hits.length} reference(s) outside the repository in ${byFile.size} file(s)`);
  process.exit(1);
}
console.log(`check-outside-references: OK — ${files.length} files name nothing outside the repository`);
