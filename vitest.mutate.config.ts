/**
 * The tests a mutation run (`npm run mutate`, stryker.config.mjs) may run: the unit project's tests
 * and, of the reliability suites, only the fast one that exercises the call table: the model-based
 * schedules, at 300 runs (as test/reliability/mutation.test.ts lowers TOOLRELAY_MODEL_RUNS for its
 * hand-written mutants) and with a fixed seed, so a mutant's verdict does not depend on the run.
 * Never the integration project (real peers), nor the bench harness's smoke test (every benchmark,
 * the real app-server among them; it checks only that each gave a figure), nor a soak.
 *
 * Stryker's vitest runner runs only the test files that import a mutated file and, per mutant, only
 * the tests that covered it (`perTest`), and stops at the first failure. Two settings make a mutant
 * cheap: test files share their modules (`isolate: false`: a file's import costs nothing after the
 * first; Stryker switches mutants at run time, and static mutants are ignored, see the Stryker
 * config), and the fastest files run first, so a mutant a fast unit test kills never waits for the
 * slow session tests. See docs/reliability.md, "Mutation testing".
 */
import { relative } from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { workspaceAliases } from "./vitest.config.js";

/** Fastest first, by the duration vitest recorded in this process (the dry run, then each mutant); unknown files first. */
class FastestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const duration = (spec: TestSpecification) =>
      this.ctx.cache.getFileTestResults(`${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`)?.duration ?? 0;
    return [...files].sort((left, right) => duration(left) - duration(right));
  }
}

export default defineConfig({
  resolve: { alias: workspaceAliases },
  test: {
    include: ["test/!(reliability|letta-peer)/**/*.test.ts", "test/reliability/model-schedules.test.ts"],
    exclude: ["node_modules/**", "test/bench/**", "test/soak/**"],
    env: { TOOLRELAY_MODEL_RUNS: "300", TOOLRELAY_MODEL_SEED: "2300" },
    testTimeout: 20_000,
    isolate: false,
    sequence: { sequencer: FastestFirst },
  },
});
