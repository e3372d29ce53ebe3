/**
 * What `toolrelay-openai` checks before it listens: that the upstream it fronts answers, so a
 * wrong address fails at start, with its cause, and not on the first chat request. A local `url`
 * backend: one WebSocket to the app-server is opened (with the token) and closed again. A cloud
 * backend: one `GET /v1/environments` to the Letta API (which also checks the key). A local
 * `spawn` backend is started by the bridge itself at start; other kinds are not checked.
 */
import { createLettaRestClient, resolveCloudApiKey, toRestError } from "../backends/letta-rest-client.js";
import { createLocalBackend } from "../backends/local-backend.js";
import { ToolrelayError } from "../errors.js";
import { systemTimers, type Timers } from "../internal/timers.js";
import type { BackendOptions } from "../session/session-options.js";
import { DEFAULT_CLOUD_BASE_URL, normaliseCloudBaseUrl } from "../transport/cloud-status-address.js";

/** How long the check waits for the upstream's answer, in ms. */
const CHECK_TIMEOUT_MS = 10_000;

/**
 * Resolves once the backend's upstream answered; rejects with a ToolrelayError naming the address,
 * the upstream's own error as its `cause` (`connect ECONNREFUSED 127.0.0.1:9`).
 */
export async function checkBridgeUpstream(backend: BackendOptions, timers: Timers = systemTimers): Promise<void> {
  if (backend.kind === "local" && backend.url !== undefined && backend.spawn === undefined) {
    const connection = await createLocalBackend({ ...backend, reconnect: false, connectTimeoutMs: CHECK_TIMEOUT_MS }, timers);
    try {
      await connection.link.connect();
    } catch (error) {
      throw new ToolrelayError(codeOf(error), `the app-server at ${connection.link.url} does not answer`, { cause: error });
    } finally {
      await connection.link.close();
      await connection.dispose();
    }
    return;
  }
  if (backend.kind === "cloud") {
    const baseUrl = normaliseCloudBaseUrl(backend.baseUrl ?? DEFAULT_CLOUD_BASE_URL);
    const client = await createLettaRestClient({
      apiKey: resolveCloudApiKey(backend.apiKey),
      baseUrl,
      ...(backend.headers ? { headers: backend.headers } : {}),
      maxRetries: 0,
      timeoutMs: CHECK_TIMEOUT_MS,
    });
    try {
      await client.environments.list({});
    } catch (error) {
      const failure = toRestError(error, "list Letta environments");
      throw new ToolrelayError(failure.code, `the Letta API at ${baseUrl} does not answer`, { cause: failure });
    }
  }
}

function codeOf(error: unknown): ToolrelayError["code"] {
  return error instanceof ToolrelayError ? error.code : "CONNECT_FAILED";
}
