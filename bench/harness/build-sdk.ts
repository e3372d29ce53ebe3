/**
 * Bundle the SDK for the benchmarks as `tsup` builds the package (esbuild,
 * ESM, target node20, dependencies external, no `keepNames`) into
 * bench/.build/<pid>/ (inside the repository, so the bundle resolves `ws`,
 * `zod`, ... from node_modules; one directory per process, so concurrent runs
 * do not overwrite each other), and point `TOOLRELAY_BENCH_SDK` /
 * `TOOLRELAY_BENCH_RELAY` at it for this process and every child it starts.
 */
import { build } from "esbuild";
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { REPO_ROOT } from "./child-process.js";

export const SDK_BUNDLE_ENV = "TOOLRELAY_BENCH_SDK";
export const RELAY_BUNDLE_ENV = "TOOLRELAY_BENCH_RELAY";

export interface SdkBundles {
  sdk: string;
  /** `undefined` when packages/relay/src does not build (`relayError` says why). */
  relay: string | undefined;
  relayError?: string;
  /** Delete the bundles (once nothing loads them any more). */
  remove(): void;
}

/** Bundle one entry (`name` → `<outdir>/<name>.mjs`, returned) as `tsup` builds the package. */
export async function bundleLikeTsup(name: string, entryFromRoot: string, outdir: string): Promise<string> {
  await build({
    entryPoints: { [name]: resolve(REPO_ROOT, entryFromRoot) },
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    // The relay package imports the SDK as `toolrelay/protocol` (its published entry): bundled
    // from source here, so a benchmark never depends on a stale or missing dist/.
    // The private CLI kit is bundled into every bin, as the packages' tsup configs do (noExternal).
    alias: {
      "toolrelay/protocol": resolve(REPO_ROOT, "packages/toolrelay/src/protocol/index.ts"),
      "@toolrelay/cli-kit": resolve(REPO_ROOT, "packages/cli-kit/src/index.ts"),
    },
    logLevel: "silent",
    outdir,
    outExtension: { ".js": ".mjs" },
  });
  return resolve(outdir, `${name}.mjs`);
}

export async function buildSdkBundles(): Promise<SdkBundles> {
  const outdir = resolve(REPO_ROOT, "bench/.build", String(process.pid));
  const remove = () => rmSync(outdir, { recursive: true, force: true });
  const sdk = await bundleLikeTsup("sdk", "bench/harness/sdk-entry.ts", outdir);
  process.env[SDK_BUNDLE_ENV] = sdk;
  try {
    const relay = await bundleLikeTsup("relay", "bench/harness/relay-entry.ts", outdir);
    process.env[RELAY_BUNDLE_ENV] = relay;
    return { sdk, relay, remove };
  } catch (error) {
    return { sdk, relay: undefined, relayError: error instanceof Error ? error.message : String(error), remove };
  }
}
