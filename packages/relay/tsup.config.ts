import { defineConfig, type Options } from "tsup";

// The reference relay: `@toolrelay/relay` and its `toolrelay-relay` bin. It imports the SDK only
// through the published `toolrelay/protocol` entry, which stays external (a dependency).
const shared: Options = {
  dts: { compilerOptions: { stripInternal: true } },
  sourcemap: false,
  clean: false,
  target: "node20",
  platform: "node",
  splitting: true,
  treeshake: true,
  tsconfig: "tsconfig.build.json",
  // The CLI kit (packages/cli-kit) is private, not published: bundled into the bin.
  noExternal: ["@toolrelay/cli-kit"],
};

const entries = { index: "src/index.ts", bin: "src/bin.ts" };

export default defineConfig([
  { ...shared, format: "esm", entry: entries },
  { ...shared, format: "cjs", entry: entries },
]);
