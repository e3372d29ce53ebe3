/** The reference relay, for benchmark 5 (bundled like ./sdk-entry.ts). */
export { startRelay } from "../../src/relay/index.js";
