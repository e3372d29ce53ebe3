import { randomBytes } from "node:crypto";
import { ToolrelayError } from "../errors.js";
import type { Timers } from "../internal/timers.js";
import type { CloudLinkOptions, CloudRuntimeAddress } from "./cloud-link-options.js";
import { openSocketPair, type SocketPair } from "./cloud-socket-pair.js";
import {
  cloudSecrets,
  cloudStatusHeaders,
  cloudStatusUrl,
  DEFAULT_CLOUD_BASE_URL,
  normaliseCloudBaseUrl,
  type CloudAuthMode,
} from "./cloud-status-address.js";

/** What the dialer needs of the link's options. */
export type CloudPairDialerOptions = Pick<
  CloudLinkOptions,
  "connectionId" | "apiKey" | "baseUrl" | "auth" | "headers" | "WebSocket" | "maxPayload" | "connectTimeoutMs"
> & { timers: Timers };

/**
 * Opens a cloud link's control + stream socket pair, for the first connection
 * and every reconnect, as one status session: the same environment connection
 * id and the same session id each time (so the relay resumes the session and
 * redelivers what was not acked), the credentials where `auth` puts them, and
 * the runtime the link knows at the time of the dial. Its constructor throws
 * INVALID_OPTIONS for an empty connection id, an empty API key (the key is
 * trimmed) or a bad base URL.
 */
export class CloudPairDialer {
  /** The forms of the API key that must never appear in an error, a log line or a close reason. */
  readonly secrets: readonly string[];
  #options: CloudPairDialerOptions;
  #baseUrl: string;
  #auth: CloudAuthMode;
  /** Stable across reconnects: lets the relay resume this status session (unacked frames are redelivered). */
  #sessionId = `sdk-${randomBytes(8).toString("hex")}`;

  constructor(options: CloudPairDialerOptions) {
    if (typeof options.connectionId !== "string" || options.connectionId === "") {
      throw new ToolrelayError("INVALID_OPTIONS", "cloud link needs a non-empty connectionId");
    }
    if (typeof options.apiKey !== "string" || options.apiKey.trim() === "") {
      throw new ToolrelayError("INVALID_OPTIONS", "cloud link needs an API key");
    }
    this.#options = { ...options, apiKey: options.apiKey.trim() };
    this.#baseUrl = normaliseCloudBaseUrl(options.baseUrl ?? DEFAULT_CLOUD_BASE_URL);
    this.#auth = options.auth ?? "header";
    this.secrets = cloudSecrets(this.#options.apiKey);
  }

  /** Open both sockets for `runtime`; rejects as `openSocketPair` does (UNAUTHORIZED, CONNECT_FAILED). */
  async dial(runtime: Readonly<CloudRuntimeAddress>): Promise<SocketPair> {
    const auth = { mode: this.#auth, apiKey: this.#options.apiKey };
    const address = { baseUrl: this.#baseUrl, connectionId: this.#options.connectionId, sessionId: this.#sessionId, ...runtime };
    return openSocketPair({
      urls: { control: cloudStatusUrl(address, "control", auth), stream: cloudStatusUrl(address, "stream", auth) },
      headers: cloudStatusHeaders(auth.apiKey, auth.mode, this.#options.headers),
      WebSocket: this.#options.WebSocket,
      maxPayload: this.#options.maxPayload,
      connectTimeoutMs: this.#options.connectTimeoutMs,
      timers: this.#options.timers,
      secrets: this.secrets,
    });
  }
}
