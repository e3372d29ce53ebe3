/**
 * Everything the benchmarks use from the SDK, in one entry. `bench/run.ts`
 * bundles this file with esbuild the way `tsup` builds the package (so the
 * figures are those of the shipped code, not of tsx's on-the-fly transform,
 * which wraps every function in a `__name` helper); the smoke test loads it
 * from source. See ./sdk.ts.
 */
export { createSession, defineTool } from "../../packages/toolrelay/src/index.js";
// Not public: a session over the bench link (`backend: { kind: "link" }`); see CONTRIBUTING.md.
export { createSessionOnLink } from "../../packages/toolrelay/src/session/create-session.js";
export { decodeFrame, encodeFrame } from "../../packages/toolrelay/src/wire/index.js";
