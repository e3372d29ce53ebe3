/**
 * `toolrelay/protocol`: what a server speaking toolrelay's wire needs from the SDK and nothing
 * else — the error class and its codes, the injected clock, the depth-bounded JSON parser, the
 * limits of the sandbox REST contract. The reference relay (`@toolrelay/relay`) imports the SDK
 * only through this entry, so a relay does not load sessions, tools or zod.
 *
 * @module toolrelay/protocol
 */
export { ToolrelayError, isToolrelayError, type ToolrelayErrorCode, type ToolrelayErrorOptions } from "../errors.js";
export { systemTimers, unrefTimer, type Timers, type TimerHandle } from "../internal/timers.js";
export { parseJson, DEFAULT_MAX_JSON_DEPTH, type JsonParseResult } from "../internal/safe-json.js";
export { isLoopbackHost } from "../internal/loopback-host.js";
export {
  GITHUB_COMMIT,
  GITHUB_OWNER,
  GITHUB_REPO,
  MAX_GITHUB_REPOSITORIES,
  SANDBOX_DEFAULTS,
  SANDBOX_TTL_MINUTES,
  type GithubRepository,
  type SandboxCreateRoute,
} from "../backends/cloud-sandbox-options.js";
