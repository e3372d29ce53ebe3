import { randomBytes } from "node:crypto";
import { ToolrelayError } from "../errors.js";
import { systemTimers } from "../internal/timers.js";
import { CloudDelivery } from "./cloud-delivery.js";
import type { CloudDeliveryStats, CloudLinkOptions, CloudRuntimeAddress } from "./cloud-link-options.js";
import {
  cloudSecrets,
  cloudStatusHeaders,
  cloudStatusUrl,
  DEFAULT_CLOUD_BASE_URL,
  normaliseCloudBaseUrl,
  type CloudAuthMode,
  type CloudChannel,
} from "./cloud-status-address.js";
import { DEFAULT_PING_INTERVAL_MS, DEFAULT_PONG_TIMEOUT_MS } from "./heartbeat-watchdog.js";
import type { LinkAddress } from "./link-sockets.js";
import { SocketLink } from "./socket-link.js";

export type { CloudDeliveryStats, CloudLinkOptions, CloudRuntimeAddress } from "./cloud-link-options.js";

/** The close code a relay uses when the environment is gone (the listener's contract). */
const ENVIRONMENT_GONE_CLOSE_CODE = 1008;

/**
 * The link to a Letta Cloud environment through the status relay, on the shared
 * {@link SocketLink}: a control and a stream WebSocket that together count as one connection (see
 * docs/cloud.md). What it adds to the base is what only the relay has:
 *
 * - **The socket pair**: open only while **both** are open; frames go out on control only. Both
 *   are opened as one status session, with the same environment connection id and the same session
 *   id every time (so the relay resumes the session and redelivers what was not acked), the
 *   credentials where `auth` puts them, and the runtime the link knows at the time.
 * - **The delivery envelope** ({@link CloudDelivery}): acks, relay duplicates, gap syncs.
 * - **Its heartbeat**: a protocol-level and a JSON ping on both sockets. Only an answer (a pong of
 *   either kind) is liveness, owed from the moment the sockets open: inbound frames show only that
 *   the relay's writes reach us, not that ours reach it. A socket with no answer past the deadline
 *   ends the connection: at most `pingIntervalMs + pongTimeoutMs` after the path died, also before
 *   the first pong. The runtime keeps pending calls across the reconnect, so
 *   `keepsPendingCallsAcrossReconnect` is `true`.
 * - **Close 1008**: the environment is gone; the link closes for good with NOT_FOUND.
 *
 * Its constructor throws INVALID_OPTIONS for an empty connection id, an empty API key (the key is
 * trimmed) or a bad base URL.
 */
export class CloudLink extends SocketLink<CloudChannel> {
  #delivery: CloudDelivery;
  #runtime: CloudRuntimeAddress;

  constructor(options: CloudLinkOptions) {
    if (typeof options.connectionId !== "string" || options.connectionId === "") {
      throw new ToolrelayError("INVALID_OPTIONS", "cloud link needs a non-empty connectionId");
    }
    if (typeof options.apiKey !== "string" || options.apiKey.trim() === "") {
      throw new ToolrelayError("INVALID_OPTIONS", "cloud link needs an API key");
    }
    const apiKey = options.apiKey.trim();
    const auth: { mode: CloudAuthMode; apiKey: string } = { mode: options.auth ?? "header", apiKey };
    const baseUrl = normaliseCloudBaseUrl(options.baseUrl ?? DEFAULT_CLOUD_BASE_URL);
    // Stable across reconnects: lets the relay resume this status session (unacked frames are redelivered).
    const sessionId = `sdk-${randomBytes(8).toString("hex")}`;
    const timers = options.timers ?? systemTimers;
    const delivery = new CloudDelivery({
      timers,
      idempotencyKeyCapacity: options.idempotencyKeyCapacity,
      reorderWindowMs: options.gapReorderWindowMs,
      debounceMs: options.syncDebounceMs,
      minIntervalMs: options.syncMinIntervalMs,
      maxIntervalMs: options.syncMaxIntervalMs,
      runtime: () => this.#runtime,
      send: (frame) => this.send(frame),
    });
    super({
      name: "cloud",
      connectionId: options.connectionId,
      keepsPendingCallsAcrossReconnect: true,
      channels: ["control", "stream"],
      address: (): LinkAddress<CloudChannel> => {
        const address = { baseUrl, connectionId: options.connectionId, sessionId, ...this.#runtime };
        return {
          urls: { control: cloudStatusUrl(address, "control", auth), stream: cloudStatusUrl(address, "stream", auth) },
          headers: cloudStatusHeaders(apiKey, auth.mode, options.headers),
        };
      },
      secrets: cloudSecrets(apiKey),
      WebSocket: options.WebSocket,
      maxPayload: options.maxPayload,
      connectTimeoutMs: options.connectTimeoutMs,
      timers,
      reconnect: options.reconnect !== false,
      backoff: options.backoff,
      fatal: ["UNAUTHORIZED", "NOT_FOUND"],
      heartbeat: {
        pingIntervalMs: options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS,
        pongTimeoutMs: options.pongTimeoutMs ?? DEFAULT_PONG_TIMEOUT_MS,
        proof: "answers",
        jsonPing: true,
      },
      rules: delivery,
      finalClose: (code, detail) =>
        code === ENVIRONMENT_GONE_CLOSE_CODE
          ? new ToolrelayError(
              "NOT_FOUND",
              `cloud environment ${options.connectionId} is gone (close 1008${detail ? `: ${detail}` : ""}); its listener registered again under a new connection id: start a new session`,
            )
          : undefined,
    });
    this.#delivery = delivery;
    this.#runtime = { ...options.runtime };
  }

  /** The runtime used in socket URLs and gap syncs. */
  get runtime(): Readonly<CloudRuntimeAddress> {
    return { ...this.#runtime };
  }

  get deliveryStats(): Readonly<CloudDeliveryStats> {
    return this.#delivery.stats;
  }

  /**
   * Tell the link whether a turn is running. Gap syncs are sent only while
   * one is (an idle session sends none), and each new turn resets their
   * back-off. Default: no turn.
   */
  setTurnActive(active: boolean): void {
    this.#delivery.setTurnActive(active);
  }

  /**
   * Record the runtime once it is known (e.g. after `runtime_start` created the
   * conversation). Used for the next reconnect's URLs and for gap syncs; the
   * open sockets are not touched.
   */
  setRuntime(runtime: CloudRuntimeAddress): void {
    this.#runtime = { ...this.#runtime, ...runtime };
  }
}
