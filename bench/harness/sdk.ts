/**
 * The SDK under test: the esbuild bundle made by `bench/run.ts` when
 * `TOOLRELAY_BENCH_SDK` names it (the shipped-code figures), else the source
 * through tsx (smoke test). Types always come from the source.
 */
import { pathToFileURL } from "node:url";
import type * as SdkModule from "./sdk-entry.js";

const bundle = process.env.TOOLRELAY_BENCH_SDK;
const sdk: typeof SdkModule = bundle ? await import(pathToFileURL(bundle).href) : await import("./sdk-entry.js");

/** `"bundle"` (esbuild, as shipped) or `"source"` (tsx). */
export const sdkOrigin: "bundle" | "source" = bundle ? "bundle" : "source";
export const { createSession, createSessionOnLink, defineTool, decodeFrame, encodeFrame } = sdk;
