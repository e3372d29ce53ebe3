/**
 * Helpers for the MCP integration suites: where the real servers are, and which processes of
 * this machine run a given script with a given argument (read from /proc, by PID), so that a
 * test can check that `close()` left no MCP child behind.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The real `@modelcontextprotocol/server-filesystem` entry point (run with `node <it> <root>`). */
export const FILESYSTEM_SERVER = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url),
);

/** The suite's own MCP server (paged listing, every content kind, a slow destructive tool, a crash). */
export const TEST_MCP_SERVER = fileURLToPath(new URL("../../test/fixtures/mcp/test-mcp-server.mjs", import.meta.url));

/** PIDs of the live processes whose command line contains every one of `parts`. */
export function processesWith(...parts: string[]): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let commandLine: string;
    try {
      commandLine = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ");
    } catch {
      continue;
    }
    if (commandLine !== "" && parts.every((part) => commandLine.includes(part)) && !isZombie(entry)) found.push(Number(entry));
  }
  return found;
}

function isZombie(pid: string): boolean {
  try {
    return /\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}
