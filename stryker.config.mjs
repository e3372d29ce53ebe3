// Mutation testing of the core (`npm run mutate`): packages/toolrelay/src/calls, packages/toolrelay/src/session and packages/toolrelay/src/transport,
// against the tests of vitest.mutate.config.ts (the unit tests and the model-based schedules; never
// the real peers). Not part of `npm test`. The reports go to reports/mutation/ (not committed);
// the last scores and the surviving mutants are in docs/reliability.md, "Mutation testing".
// One directory at a time: npm run mutate -- --mutate "packages/toolrelay/src/calls/**/*.ts"

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  packageManager: "npm",
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.mutate.config.ts", related: true },
  mutate: [
    "packages/toolrelay/src/calls/**/*.ts",
    "packages/toolrelay/src/session/**/*.ts",
    "packages/toolrelay/src/transport/**/*.ts",
    "!packages/toolrelay/src/**/index.ts",
  ],
  // Each mutant runs only the tests that covered it in the dry run.
  coverageAnalysis: "perTest",
  // The machine has 2 cores and is shared.
  concurrency: 1,
  // Static mutants (module-level code, run once at import) would need every test and a fresh
  // module graph; the test files share theirs (vitest.mutate.config.ts), so they are left out.
  ignoreStatic: true,
  // A mutant times out at timeoutMS + timeoutFactor × its covering tests' dry-run time: generous,
  // so a loaded machine does not turn a slow kill or survivor into a "timeout".
  timeoutMS: 20_000,
  timeoutFactor: 2,
  dryRunTimeoutMinutes: 30,
  // No threshold fails the run yet.
  thresholds: { high: 80, low: 60, break: null },
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  tempDirName: ".stryker-tmp",
  cleanTempDir: true,
  // Not needed by the tests it runs: the integration suites, generated docs, the build.
  ignorePatterns: ["/integration", "/dist", "/docs/api", "/reports", "/coverage"],
};
