import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * The packages by name, resolved to their source (as tsconfig.json's `paths` do for tsc and tsx):
 * the relay package imports the SDK only as `toolrelay/protocol`, and a test must run it against
 * the SDK's source, not a build.
 */
const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));
export const workspaceAliases = [
  { find: /^toolrelay\/(testing|protocol|acp|mcp|sidecar|openai)$/, replacement: source("./packages/toolrelay/src/$1/index.ts") },
  { find: /^toolrelay$/, replacement: source("./packages/toolrelay/src/index.ts") },
  { find: /^@toolrelay\/relay$/, replacement: source("./packages/relay/src/index.ts") },
];

export default defineConfig({
  test: {
    projects: [
      {
        resolve: { alias: workspaceAliases },
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
        resolve: { alias: workspaceAliases },
        test: {
          name: "reliability",
          include: ["test/reliability/**/*.test.ts"],
          testTimeout: 20_000,
        },
      },
      {
        resolve: { alias: workspaceAliases },
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
