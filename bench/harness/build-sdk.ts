/**
 * Bundle the SDK for the benchmarks as `tsup` builds the package (esbuild,
 * ESM, target node20, dependencies external, no `keepNames`) into
 * bench/.build/, and point `TOOLRELAY_BENCH_SDK` at it for this process and
 * every child it starts.
 */
import { build } from "esbuild";
import { resolve } from "node:path";
import { REPO_ROOT } from "./child-process.js";

export const SDK_BUNDLE_ENV = "TOOLRELAY_BENCH_SDK";
export const RELAY_BUNDLE_ENV = "TOOLRELAY_BENCH_RELAY";

export async function buildSdkBundles(): Promise<{ sdk: string; relay: string | undefined; relayError?: string }> {
  const outdir = resolve(REPO_ROOT, "bench/.build");
  const common = { bundle: true, format: "esm", platform: "node", target: "node20", packages: "external", logLevel: "silent" } as const;
  await build({ ...common, entryPoints: { sdk: resolve(REPO_ROOT, "bench/harness/sdk-entry.ts") }, outdir, outExtension: { ".js": ".mjs" } });
  const sdk = resolve(outdir, "sdk.mjs");
  process.env[SDK_BUNDLE_ENV] = sdk;
  try {
    await build({ ...common, entryPoints: { relay: resolve(REPO_ROOT, "bench/harness/relay-entry.ts") }, outdir, outExtension: { ".js": ".mjs" } });
    const relay = resolve(outdir, "relay.mjs");
    process.env[RELAY_BUNDLE_ENV] = relay;
    return { sdk, relay };
  } catch (error) {
    return { sdk, relay: undefined, relayError: error instanceof Error ? error.message : String(error) };
  }
}
