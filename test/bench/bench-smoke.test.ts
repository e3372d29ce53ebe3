/**
 * Smoke run of the benchmark harness (`npm run bench -- --quick`): every suite
 * runs with a few iterations — child processes, the real app-server, the relay,
 * the MCP server — and produces its rows. No figure is asserted: speed is
 * measured by `npm run bench`, never in the test suite. Nothing is written to
 * docs/.
 */
import { describe, expect, it } from "vitest";
import { runBench, SUITE_NAMES } from "../../bench/run.js";

describe("bench harness (quick run)", () => {
  it("runs every suite and renders the table and the report", async () => {
    const lines: string[] = [];
    const run = await runBench({ quick: true, out: false, log: (line) => lines.push(line) });

    expect(run.suites.map((suite) => suite.name).sort()).toEqual([...SUITE_NAMES].sort());
    for (const suite of run.suites) {
      expect(suite.rows.length, `${suite.name} has rows`).toBeGreaterThan(0);
      for (const row of suite.rows) {
        expect(row.measure, `${suite.name} did not fail: ${row.note ?? ""}`).not.toBe("failed");
        // A figure exists (its size is not checked), unless the relay is marked pending.
        if (!row.note?.startsWith("pending:")) expect(Number.isFinite(row.ratio), `${suite.name} / ${row.measure}`).toBe(true);
      }
    }
    for (const section of ["1. Round trip", "2. Throughput", "3. vs MCP stdio", "4. Scale", "5. Relay hop", "6. Real turn"]) {
      expect(run.table).toContain(section);
      expect(run.markdown).toContain(`| ${section} |`);
    }
    expect(run.markdown).toContain("Quick run");
    expect(run.markdown).toMatch(/\| Node \| v\d+/);
    expect(run.markdown).toContain("| Command | `npm run bench` |");
  }, 180_000);
});
