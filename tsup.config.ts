import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    "testing/index": "src/testing/index.ts",
    "relay/index": "src/relay/index.ts",
    "relay/bin": "src/relay/bin.ts",
    "acp/index": "src/acp/index.ts",
    "mcp/index": "src/mcp/index.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  platform: "node",
  splitting: true,
  treeshake: true,
});
