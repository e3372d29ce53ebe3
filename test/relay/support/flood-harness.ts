/**
 * A victim's round trip through the relay while another tenant floods it, as a ratio against
 * the victim's quiet round trip measured in the same run. Four processes on loopback: the relay
 * (CLI), the flooding tenant (flood-process.ts, raw pre-masked frames), and — in this process —
 * the victim's listener (answers `sync` with `sync_response` at once) and the victim's SDK
 * client (acks every `seq`, one `sync` at a time). Used by test/reliability/security-flood.test.ts
 * and by `npm run bench` (bench/suites/relay-flood.ts).
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { FakeListener } from "./fake-listener.js";
import { waitForOpen } from "./frame-log.js";
import { startRelayProcess, type RelayProcess } from "./relay-process.js";

export const VICTIM_KEY = "victim-tenant-key-0123456789";
export const FLOOD_KEY = "flood-tenant-key-0123456789";
const FLOOD_PROCESS = fileURLToPath(new URL("./flood-process.ts", import.meta.url));

export interface FloodRatioOptions {
  /** Frames the flooding tenant sends. */
  frames: number;
  /** Padding per flood frame in bytes (0: ~100-byte frames). Default 0. */
  padBytes?: number;
  /** Round trips measured before the quiet sample. Default 300. */
  warmup?: number;
  /** Round trips in the quiet sample. Default 2,000. */
  quietRoundTrips?: number;
  /** Extra relay CLI flags. */
  relayArgs?: string[];
  log?: (line: string) => void;
}

export interface Percentiles {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface FloodRatioResult {
  /** Victim round trips (ms) with nobody else on the relay. */
  quiet: Percentiles;
  /** Victim round trips (ms) while the flood ran. */
  flood: Percentiles;
  /** flood p99 ÷ quiet p99. */
  ratio: number;
  /** Flood frames the relay forwarded to the flooder's own listener (all of them, or the run failed). */
  forwarded: number;
  /** How long the flood took from the first write until the last frame was forwarded (ms). */
  floodMs: number;
}

export function percentiles(samples: readonly number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? Number.NaN };
}

/** The victim's SDK side: one `sync` at a time, every `seq` acked. */
class VictimClient {
  #sockets: WebSocket[];
  #waiting = new Map<string, () => void>();
  #next = 0;

  private constructor(sockets: WebSocket[]) {
    this.#sockets = sockets;
    for (const socket of sockets) {
      socket.on("message", (data) => {
        const frame = JSON.parse(data.toString()) as { type?: string; seq?: number; request_id?: string };
        if (typeof frame.seq === "number") socket.send(`{"type":"ack","seq":${frame.seq}}`);
        if (frame.type === "sync_response" && frame.request_id) this.#waiting.get(frame.request_id)?.();
      });
    }
  }

  static async connect(relay: RelayProcess, connectionId: string): Promise<VictimClient> {
    const open = (channel: string) => {
      const socket = new WebSocket(
        `${relay.url}/v1/environments/${connectionId}/status/ws?channel=${channel}&sessionId=victim&agentId=victim-agent&conversationId=victim-conv`,
        {
          headers: { authorization: `Bearer ${VICTIM_KEY}` },
        },
      );
      socket.on("error", () => {});
      return socket;
    };
    const sockets = [open("control"), open("stream")];
    await Promise.all(sockets.map((socket) => waitForOpen(socket)));
    return new VictimClient(sockets);
  }

  /** One round trip in ms (deadline 30 s). */
  roundTrip(): Promise<number> {
    const requestId = `victim-${++this.#next}`;
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no sync_response for ${requestId} within 30 s`)), 30_000);
      this.#waiting.set(requestId, () => {
        clearTimeout(timer);
        this.#waiting.delete(requestId);
        resolve(performance.now() - started);
      });
      this.#sockets[0]!.send(
        JSON.stringify({ type: "sync", runtime: { agent_id: "victim-agent", conversation_id: "victim-conv" }, request_id: requestId }),
      );
    });
  }

  close(): void {
    for (const socket of this.#sockets) socket.terminate();
  }
}

/** Starts the flooder; resolves once it is connected and waiting for `go`. */
function startFlooder(relay: RelayProcess, frames: number, padBytes: number) {
  const child = fork(FLOOD_PROCESS, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const messages: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  child.on("message", (message: Record<string, unknown>) => {
    messages.push(message);
    for (const wake of waiters.splice(0)) wake();
  });
  const next = (type: string, timeoutMs: number) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`flooder: no ${type} within ${timeoutMs} ms`)), timeoutMs);
      const check = () => {
        const failed = messages.find((message) => message.type === "failed");
        if (failed) {
          clearTimeout(timer);
          reject(new Error(`flooder failed: ${String(failed.error)}`));
          return;
        }
        const found = messages.find((message) => message.type === type);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        } else waiters.push(check);
      };
      check();
    });
  child.send({ httpUrl: relay.httpUrl, apiKey: FLOOD_KEY, frames, padBytes });
  return {
    ready: () => next("ready", 30_000),
    go: () => child.send("go"),
    done: (timeoutMs: number) => next("done", timeoutMs),
    /** Kill the flooder and wait until it is gone (a child left running is a leaked process handle). */
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGKILL");
      await exited;
    },
  };
}

export async function measureFloodRatio(options: FloodRatioOptions): Promise<FloodRatioResult> {
  const log = options.log ?? (() => {});
  const relay = await startRelayProcess({ victim: [VICTIM_KEY], flooder: [FLOOD_KEY] }, [
    "--listener-mode",
    "single",
    "--heartbeat-interval-ms",
    "0",
    ...(options.relayArgs ?? []),
  ]);
  let listener: FakeListener | undefined;
  let victim: VictimClient | undefined;
  let flooder: ReturnType<typeof startFlooder> | undefined;
  try {
    listener = await FakeListener.start(relay.httpUrl, VICTIM_KEY, { mode: "single", deviceId: "victim-device" });
    const control = listener.control!;
    control.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as { type?: string; request_id?: string };
      if (frame.type === "sync" && frame.request_id)
        control.send(JSON.stringify({ type: "sync_response", request_id: frame.request_id, success: true }));
    });
    victim = await VictimClient.connect(relay, listener.answer.connectionId);
    for (let index = 0; index < (options.warmup ?? 300); index++) await victim.roundTrip();
    const quiet: number[] = [];
    for (let index = 0; index < (options.quietRoundTrips ?? 2_000); index++) quiet.push(await victim.roundTrip());
    log(`flood: quiet sample done (${quiet.length} round trips)`);
    flooder = startFlooder(relay, options.frames, options.padBytes ?? 0);
    await flooder.ready();
    const flood: number[] = [];
    let finished: Record<string, unknown> | undefined;
    const done = flooder.done(300_000).then((message) => (finished = message));
    flooder.go();
    while (finished === undefined) flood.push(await victim.roundTrip());
    await done;
    log(
      `flood: ${options.frames} frames forwarded in ${Math.round(Number(finished.forwardedMs))} ms; ${flood.length} victim round trips meanwhile`,
    );
    const quietStats = percentiles(quiet);
    const floodStats = percentiles(flood);
    return {
      quiet: quietStats,
      flood: floodStats,
      ratio: floodStats.p99 / quietStats.p99,
      forwarded: Number(finished.forwarded),
      floodMs: Number(finished.forwardedMs),
    };
  } finally {
    await flooder?.stop();
    victim?.close();
    listener?.terminate();
    await relay.stop();
  }
}
