/**
 * The close codes the relay sends, with their reasons, in one place (docs/relay.md "Close codes").
 * 1008 is the listener's contract ("environment gone: register again"), which the SDK also reads
 * as final; the 4xxx codes are the relay's own and make a client reconnect.
 */
export const RELAY_CLOSE = {
  /** The environment was removed (listener: register again; SDK: resolve the environment again). */
  environmentGone: { code: 1008, reason: "Environment gone" },
  /** A listener socket for an environment that does not exist (or is not the caller's). */
  environmentNotFound: { code: 1008, reason: "Environment not found" },
  /** A listener socket whose `deviceId` is not the device that registered the environment. */
  wrongDevice: { code: 1008, reason: "Device does not own this environment" },
  /** A new registration of the same listener identity by the same tenant. The listener exits on exactly this. */
  replacedListener: { code: 1000, reason: "Replaced by new connection" },
  /** Relay shutdown, or a socket superseded by a newer one. */
  goingAway: { code: 1001, reason: "Relay shutting down" },
  /** Cluster mode: this node no longer holds the environment (its lease moved or ran out, or the node stops); reconnect through the balancer. */
  movedNode: { code: 1012, reason: "Environment moved to another relay node; reconnect" },
  /** An SDK session whose resume window ended without a reconnect. */
  sessionExpired: { code: 1001, reason: "Session expired" },
  /** An SDK session held more unacknowledged bytes than its bound (or its tenant's). */
  unackedLimit: { code: 4008, reason: "Unacknowledged frames over the relay's limit; reconnect and ack every seq" },
  /** A stream socket of another generation than the listener's control socket. */
  unpairedStream: { code: 4409, reason: "Stream does not match the control socket" },
} as const;
