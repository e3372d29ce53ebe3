import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    "testing/index": "src/testing/index.ts",
    "relay/index": "src/relay/index.ts",
    "relay/bin": "src/relay/bin.ts",
    "acp/index": "src/acp/index.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  // No source maps in the package: they were 63% of its unpacked size and pointed at src/, which
  // is not shipped. The output is unminified and readable as it is.
  sourcemap: false,
  clean: true,
  target: "node20",
  platform: "node",
  splitting: true,
  treeshake: true,
  // p-timeout is ESM-only: bundled, so the CommonJS build loads under Jest 30 and plain
  // `require` (Jest's module system has no require(esm)). It is a devDependency for this reason.
  noExternal: ["p-timeout"],
});
