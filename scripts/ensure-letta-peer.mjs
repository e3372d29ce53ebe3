#!/usr/bin/env node
// Installs the real Letta Code peer (test/letta-peer) when it is missing, so the integration
// tests that need it always run. Runs as `npm pretest`; a fast no-op when the peer is present.
// Plain Node ESM, no dependencies. Exits non-zero (loudly) if the install fails.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const peerDir = join(root, "test", "letta-peer");
const required = [
  join(peerDir, "node_modules", "@letta-ai", "letta-code", "letta.js"),
  join(peerDir, "node_modules", "node", "bin", "node"),
];

const missing = required.filter((file) => !existsSync(file));
if (missing.length === 0) process.exit(0);

const hasLockfile = existsSync(join(peerDir, "package-lock.json"));
const args = hasLockfile ? ["ci", "--no-audit", "--no-fund"] : ["install", "--no-audit", "--no-fund"];
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

console.error(`[ensure-letta-peer] missing: ${missing.map((file) => file.slice(root.length + 1)).join(", ")}`);
console.error(`[ensure-letta-peer] running \`npm ${args.join(" ")}\` in test/letta-peer (about 30 s, ~570 MB)…`);
const started = Date.now();
const result = spawnSync(npm, args, {
  cwd: peerDir,
  stdio: "inherit",
  // The peer's @scarf/scarf postinstall would otherwise phone home.
  env: { ...process.env, SCARF_ANALYTICS: "false", DO_NOT_TRACK: "1" },
  shell: process.platform === "win32",
});

if (result.error) {
  console.error(`[ensure-letta-peer] could not run npm: ${result.error.message}`);
  process.exit(1);
}
if (result.status !== 0) {
  console.error(`[ensure-letta-peer] npm ${args[0]} failed with exit code ${result.status ?? result.signal}`);
  process.exit(result.status || 1);
}
const stillMissing = required.filter((file) => !existsSync(file));
if (stillMissing.length > 0) {
  console.error(
    `[ensure-letta-peer] npm ${args[0]} finished but these are still missing: ${stillMissing.join(", ")}\n` +
      "[ensure-letta-peer] the peer needs its dependencies' install scripts (see test/letta-peer/README.md); " +
      "check `npm config get ignore-scripts`.",
  );
  process.exit(1);
}
console.error(`[ensure-letta-peer] installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
