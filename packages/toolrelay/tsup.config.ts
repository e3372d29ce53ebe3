import { defineConfig, type Options } from "tsup";

const shared: Options = {
  // `@internal` members (Session.create, Turn.push/finish/fail, ...) are not part of the public
  // types: a caller cannot name them. They stay in the JavaScript, where the session needs them.
  dts: { compilerOptions: { stripInternal: true } },
  // No source maps in the package: they were 63% of its unpacked size and pointed at src/, which
  // is not shipped. The output is unminified and readable as it is.
  sourcemap: false,
  // `npm run build` empties dist/ first (the prebuild script): two configs share the folder.
  clean: false,
  target: "node20",
  platform: "node",
  splitting: true,
  treeshake: true,
  // Classes keep their names (esbuild renames a class that refers to itself: `_ToolrelayError`, which is what Node printed for an uncaught error).
  keepNames: true,
  tsconfig: "tsconfig.build.json",
  // p-timeout is ESM-only: bundled, so the CommonJS build loads under Jest 30 and plain
  // `require` (Jest's module system has no require(esm)). It is a devDependency for this reason
  // (tsup bundles devDependencies anyway; this line says so on purpose). The consumer test's Jest
  // project fails when it is external.
  noExternal: ["p-timeout", "@toolrelay/cli-kit"],
};

const entries = {
  index: "src/index.ts",
  "testing/index": "src/testing/index.ts",
  "protocol/index": "src/protocol/index.ts",
  "mcp/index": "src/mcp/index.ts",
  "sidecar/index": "src/sidecar/index.ts",
  "sidecar/bin": "src/sidecar/bin.ts",
  "openai/index": "src/openai/index.ts",
  "nats-journal/index": "src/nats-journal/index.ts",
  "openai/bin": "src/openai/bin.ts",
};

export default defineConfig([
  // toolrelay/acp is ESM only: its peer @agentclientprotocol/sdk is ESM only, so a CommonJS
  // copy could not load it under Jest nor type-check under moduleResolution node16.
  { ...shared, format: "esm", entry: { ...entries, "acp/index": "src/acp/index.ts" } },
  { ...shared, format: "cjs", entry: entries },
]);
