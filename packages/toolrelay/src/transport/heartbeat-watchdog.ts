import type { TimerHandle, Timers } from "../internal/timers.js";

/**
 * Heartbeat for a set of sockets (the cloud link's control and stream
 * channels, or the local link's one socket), built on evidence only.
 *
 * Every `pingIntervalMs` `sendPing` is called for every channel (the owner
 * writes a protocol-level ping, a JSON ping, or both). What counts:
 * - `proof: "traffic"` (the default): **any** inbound traffic on a channel — a
 *   frame, a protocol pong, a protocol ping from the server — is liveness
 *   (`received`).
 * - `proof: "answers"`: only an **answer** to a ping (`answered`: a JSON `pong`
 *   or a protocol pong) is. Inbound traffic shows only that the far end's
 *   writes reach us; on a path that died the other way they still do while
 *   everything we write is lost. An answer is the one proof that we are heard.
 * - A channel that has **answered** a ping once is expected to answer every
 *   ping: from then on the first ping after its last proof of life arms a
 *   `pongTimeoutMs` deadline, cleared by the next proof. A channel that never
 *   answered gets no deadline (nothing says its server answers pings), unless
 *   `deadlineFromStart` says it must (a server known to answer: every
 *   WebSocket peer answers a protocol ping).
 *
 * A deadline that fires means the channel is half-open: `onTimeout` is called
 * once and the watchdog stops (the owner terminates the sockets and
 * reconnects). A dead channel held to deadlines is therefore detected at most
 * `pingIntervalMs + pongTimeoutMs` after its last proof of life — with
 * `deadlineFromStart`, counting from `start()` (the sockets opening) on.
 */
export interface HeartbeatWatchdogOptions<Channel extends string> {
  channels: readonly Channel[];
  /** Time between two pings, in ms. Default 10_000. `0` turns the heartbeat off. */
  pingIntervalMs?: number | undefined;
  /** How long a ping may go without a proof of life (see `proof`), in ms. Default 20_000. `0` sends pings but never times out. */
  pongTimeoutMs?: number | undefined;
  /** Arm deadlines before a channel answered a ping (its server is known to answer). Default `false`. */
  deadlineFromStart?: boolean | undefined;
  /** What clears a deadline: any inbound traffic (`"traffic"`), or only an answer to a ping (`"answers"`). Default `"traffic"`. */
  proof?: "traffic" | "answers" | undefined;
  timers: Timers;
  /** Write the ping(s) on `channel`. Must not throw. */
  sendPing: (channel: Channel) => void;
  /** `channel` gave no proof of life past its deadline (`silentForMs`: since its last one). Called at most once per `start()`. */
  onTimeout: (channel: Channel, silentForMs: number) => void;
}

export const DEFAULT_PING_INTERVAL_MS = 10_000;
export const DEFAULT_PONG_TIMEOUT_MS = 20_000;

export class HeartbeatWatchdog<Channel extends string> {
  #options: HeartbeatWatchdogOptions<Channel>;
  #pingIntervalMs: number;
  #pongTimeoutMs: number;
  #answersOnly: boolean;
  #pingTimer: TimerHandle | undefined;
  #deadlines = new Map<Channel, TimerHandle>();
  /** When each channel last showed it is alive. A plain object, not a Map: it is written on every inbound message. */
  #lastProofAt: Partial<Record<Channel, number>> = {};
  #answering = new Set<Channel>();
  #running = false;

  constructor(options: HeartbeatWatchdogOptions<Channel>) {
    this.#options = options;
    this.#pingIntervalMs = Math.max(0, options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS);
    this.#pongTimeoutMs = Math.max(0, options.pongTimeoutMs ?? DEFAULT_PONG_TIMEOUT_MS);
    this.#answersOnly = options.proof === "answers";
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
    for (const channel of this.#options.channels) this.#lastProofAt[channel] = now;
    this.#armPing();
  }

  /** Something arrived on `channel`: it is alive (with `proof: "answers"` this proves nothing). */
  received(channel: Channel): void {
    if (!this.#running || this.#answersOnly) return;
    this.#alive(channel);
  }

  /** `channel` answered a ping (a JSON `pong` or a protocol pong): alive, and expected to keep answering. */
  answered(channel: Channel): void {
    this.#answering.add(channel);
    if (this.#running) this.#alive(channel);
  }

  /** Stop every timer. Safe to call any time, any number of times. */
  stop(): void {
    this.#running = false;
    if (this.#pingTimer !== undefined) this.#options.timers.clearTimeout(this.#pingTimer);
    this.#pingTimer = undefined;
    for (const deadline of this.#deadlines.values()) this.#options.timers.clearTimeout(deadline);
    this.#deadlines.clear();
  }

  #alive(channel: Channel): void {
    this.#lastProofAt[channel] = this.#options.timers.now();
    if (this.#deadlines.size === 0) return;
    const deadline = this.#deadlines.get(channel);
    if (deadline !== undefined) {
      this.#options.timers.clearTimeout(deadline);
      this.#deadlines.delete(channel);
    }
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
      const silentForMs = this.#options.timers.now() - (this.#lastProofAt[channel] ?? 0);
      this.stop();
      this.#options.onTimeout(channel, silentForMs);
    }, this.#pongTimeoutMs);
    this.#deadlines.set(channel, handle);
  }
}
