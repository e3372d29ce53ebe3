import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          // test/reliability has its own project: chaos schedules, heap and process tests take
          // most of the time and are run (and leak-checked) on their own.
          exclude: ["test/letta-peer/**", "test/reliability/**", "node_modules/**"],
          testTimeout: 20_000,
          typecheck: { enabled: true, include: ["test/**/*.test-d.ts"] },
        },
      },
      {
        test: {
          name: "reliability",
          include: ["test/reliability/**/*.test.ts"],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["integration/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
