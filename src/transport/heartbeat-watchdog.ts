import type { TimerHandle, Timers } from "../internal/timers.js";

/**
 * Heartbeat for a set of sockets (the cloud link's control and stream
 * channels, or the local link's one socket), built on evidence only.
 *
 * Every `pingIntervalMs` `sendPing` is called for every channel (the owner
 * writes a protocol-level ping, a JSON ping, or both). What counts:
 * - **Any** inbound traffic on a channel — a frame, a protocol pong, a
 *   protocol ping from the server — is liveness (`received`).
 * - A channel that has **answered** a ping once (`answered`: a JSON `pong`
 *   or a protocol pong) is expected to answer every ping: from then on the
 *   first ping after its last inbound traffic arms a `pongTimeoutMs`
 *   deadline, cleared by any inbound traffic. A channel that never answered
 *   gets no deadline (nothing says its server answers pings), unless
 *   `deadlineFromStart` says it must (a server known to answer).
 *
 * A deadline that fires means the channel is half-open: `onTimeout` is called
 * once and the watchdog stops (the owner terminates the sockets and
 * reconnects). A dead channel that answered before is therefore detected at
 * most `pingIntervalMs + pongTimeoutMs` after its last inbound traffic.
 */
export interface HeartbeatWatchdogOptions<Channel extends string> {
  channels: readonly Channel[];
  /** Time between two pings, in ms. Default 10_000. `0` turns the heartbeat off. */
  pingIntervalMs?: number;
  /** How long a ping may go unanswered (no inbound traffic at all), in ms. Default 20_000. `0` sends pings but never times out. */
  pongTimeoutMs?: number;
  /** Arm deadlines before a channel answered a ping (its server is known to answer). Default `false`. */
  deadlineFromStart?: boolean;
  timers: Timers;
  /** Write the ping(s) on `channel`. Must not throw. */
  sendPing: (channel: Channel) => void;
  /** `channel` stayed silent past its deadline. Called at most once per `start()`. */
  onTimeout: (channel: Channel, silentForMs: number) => void;
}

export const DEFAULT_PING_INTERVAL_MS = 10_000;
export const DEFAULT_PONG_TIMEOUT_MS = 20_000;

export class HeartbeatWatchdog<Channel extends string> {
  #options: HeartbeatWatchdogOptions<Channel>;
  #pingIntervalMs: number;
  #pongTimeoutMs: number;
  #pingTimer: TimerHandle | undefined;
  #deadlines = new Map<Channel, TimerHandle>();
  /** A plain object, not a Map: it is written on every inbound message. */
  #lastInboundAt: Partial<Record<Channel, number>> = {};
  #answering = new Set<Channel>();
  #running = false;

  constructor(options: HeartbeatWatchdogOptions<Channel>) {
    this.#options = options;
    this.#pingIntervalMs = Math.max(0, options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS);
    this.#pongTimeoutMs = Math.max(0, options.pongTimeoutMs ?? DEFAULT_PONG_TIMEOUT_MS);
  }

  get running(): boolean {
    return this.#running;
  }

  /** Whether `channel` has answered a ping since `start()` (so its deadlines apply). */
  isAnswering(channel: Channel): boolean {
    return this.#answering.has(channel);
  }

  /** Start pinging (the sockets just opened; they count as alive now, and as not yet answering). */
  start(): void {
    this.stop();
    this.#answering.clear();
    if (this.#options.deadlineFromStart) for (const channel of this.#options.channels) this.#answering.add(channel);
    if (this.#pingIntervalMs === 0) return;
    this.#running = true;
    const now = this.#options.timers.now();
    for (const channel of this.#options.channels) this.#lastInboundAt[channel] = now;
    this.#armPing();
  }

  /** Something arrived on `channel`: it is alive. */
  received(channel: Channel): void {
    if (!this.#running) return;
    this.#lastInboundAt[channel] = this.#options.timers.now();
    if (this.#deadlines.size === 0) return;
    const deadline = this.#deadlines.get(channel);
    if (deadline !== undefined) {
      this.#options.timers.clearTimeout(deadline);
      this.#deadlines.delete(channel);
    }
  }

  /** `channel` answered a ping (a JSON `pong` or a protocol pong): alive, and expected to keep answering. */
  answered(channel: Channel): void {
    this.#answering.add(channel);
    this.received(channel);
  }

  /** Stop every timer. Safe to call any time, any number of times. */
  stop(): void {
    this.#running = false;
    if (this.#pingTimer !== undefined) this.#options.timers.clearTimeout(this.#pingTimer);
    this.#pingTimer = undefined;
    for (const deadline of this.#deadlines.values()) this.#options.timers.clearTimeout(deadline);
    this.#deadlines.clear();
  }

  #armPing(): void {
    this.#pingTimer = this.#options.timers.setTimeout(() => {
      this.#pingTimer = undefined;
      if (!this.#running) return;
      for (const channel of this.#options.channels) {
        if (!this.#running) return;
        this.#options.sendPing(channel);
        if (this.#pongTimeoutMs > 0 && this.#answering.has(channel) && !this.#deadlines.has(channel)) this.#armDeadline(channel);
      }
      if (this.#running) this.#armPing();
    }, this.#pingIntervalMs);
  }

  #armDeadline(channel: Channel): void {
    const handle = this.#options.timers.setTimeout(() => {
      this.#deadlines.delete(channel);
      if (!this.#running) return;
      const silentForMs = this.#options.timers.now() - (this.#lastInboundAt[channel] ?? 0);
      this.stop();
      this.#options.onTimeout(channel, silentForMs);
    }, this.#pongTimeoutMs);
    this.#deadlines.set(channel, handle);
  }
}
