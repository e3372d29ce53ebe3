import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: ["test/letta-peer/**", "node_modules/**"],
          testTimeout: 20_000,
          typecheck: { enabled: true, include: ["test/**/*.test-d.ts"] },
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
