/** The reference relay, for benchmark 5 (bundled like ./sdk-entry.ts). */
export { startRelay } from "../../packages/relay/src/index.js";
