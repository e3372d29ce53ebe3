/**
 * Mutation testing of the model-based schedules: for each mutant
 * (mutants.ts), copy packages/toolrelay/src/ and the model suite into a scratch directory, apply
 * the patch to the copy, run the suite there in a child process, and require
 * that it fails. The run at which fast-check caught it is printed.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { MUTANTS } from "./mutants.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), "toolrelay-mutants-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function prepare(name: string): string {
  const copy = path.join(scratch, name);
  cpSync(path.join(root, "packages", "toolrelay", "src"), path.join(copy, "packages", "toolrelay", "src"), { recursive: true });
  for (const file of ["model-schedules.ts", "model-schedules.test.ts"]) {
    cpSync(path.join(root, "test", "reliability", file), path.join(copy, "test", "reliability", file));
  }
  symlinkSync(path.join(root, "node_modules"), path.join(copy, "node_modules"), "dir");
  writeFileSync(path.join(copy, "package.json"), JSON.stringify({ type: "module" }));
  writeFileSync(
    path.join(copy, "vitest.config.ts"),
    'import { defineConfig } from "vitest/config";\nexport default defineConfig({ test: { include: ["test/**/*.test.ts"] } });\n',
  );
  return copy;
}

describe("the model-based schedules kill every mutant of the call table", () => {
  it("runs on the unmutated copy (the harness itself works)", () => {
    const copy = prepare("unmutated");
    const result = runSuite(copy, 200);
    expect(result.status, result.output).toBe(0);
  }, 120_000);

  it.each(MUTANTS.map((mutant) => [mutant.name, mutant] as const))(
    "kills %s",
    (_name, mutant) => {
      const copy = prepare(mutant.name);
      const file = path.join(copy, "packages", "toolrelay", "src", mutant.file);
      const source = readFileSync(file, "utf8");
      expect(
        source.split(mutant.find),
        `the mutant's anchor in packages/toolrelay/src/${mutant.file} must appear exactly once`,
      ).toHaveLength(2);
      writeFileSync(file, source.replace(mutant.find, mutant.replace));
      const result = runSuite(copy, 10_000);
      expect(result.status, `mutant ${mutant.name} (${mutant.mistake}) survived 10,000 schedules`).not.toBe(0);
      const caught = /Property failed after (\d+) tests/.exec(result.output);
      expect(caught, result.output.slice(-2_000)).not.toBeNull();
      console.log(`mutant ${mutant.name} killed at run ${caught![1]}: ${mutant.mistake}`);
    },
    300_000,
  );
});

function runSuite(copy: string, runs: number): { status: number | null; output: string } {
  const vitest = path.join(root, "node_modules", "vitest", "vitest.mjs");
  const result = spawnSync(process.execPath, [vitest, "run", "--root", copy], {
    cwd: copy,
    env: { ...process.env, TOOLRELAY_MODEL_RUNS: String(runs), FORCE_COLOR: "0", NO_COLOR: "1" },
    encoding: "utf8",
    timeout: 280_000,
  });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}
