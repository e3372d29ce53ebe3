/**
 * The real Letta Code listener (`letta server --env-name <name> --debug`) as a child process,
 * pointed at a relay on 127.0.0.1 (see docs/protocol.md#the-listener-behind-the-relay). It registers at
 * `POST <relayUrl>/v1/environments/register` and then opens the WebSocket the relay names.
 */
import { spawnPeerProcess, type PeerExit, type WaitForLineOptions } from "../../test/support/peer-process.js";

export interface LettaListenerOptions {
  /** The relay's HTTP origin, e.g. `http://127.0.0.1:<port>`; becomes `LETTA_BASE_URL`. */
  relayUrl: string;
  /** `--env-name` value (the environment's connection name). */
  envName: string;
  /** OpenAI base URL of the model, ending in `/v1`; becomes `LLAMA_CPP_BASE_URL`. */
  modelUrl: string;
  /** Sent as `Authorization: Bearer` on every request and upgrade. Must be non-empty. */
  apiKey: string;
  /** Extra environment variables (override the defaults). */
  env?: Record<string, string>;
  /** Extra CLI arguments after `server --env-name <name> --debug`. */
  args?: string[];
  /** Deadline for `Connected. Awaiting instructions.`. Default 30 000 ms. */
  readyTimeoutMs?: number;
  /** Resolve as soon as the process is spawned instead of waiting for readiness. Default false. */
  skipReadyWait?: boolean;
}

export interface LettaListener {
  readonly pid: number;
  readonly home: string;
  readonly stdoutLines: string[];
  readonly stderrLines: string[];
  readonly exited: Promise<PeerExit>;
  hasExited(): boolean;
  output(): string;
  /** The `occurrence`-th output line (stdout or stderr) matching `pattern`, counting lines already seen. */
  waitForLine(pattern: RegExp, options?: WaitForLineOptions): Promise<RegExpMatchArray>;
  /**
   * Resolves once the listener printed `Connected. Awaiting instructions.` for the
   * `occurrence`-th time (default 1; pass 2 to wait for the first reconnect). Default deadline 30 s.
   */
  waitUntilConnected(options?: { timeoutMs?: number; occurrence?: number }): Promise<void>;
  /** SIGTERM, SIGKILL after 1 s, waits for exit, removes HOME. Idempotent. */
  stop(): Promise<void>;
}

const CONNECTED_LINE = /Connected\. Awaiting instructions\./;

export async function startLettaListener(options: LettaListenerOptions): Promise<LettaListener> {
  if (options.apiKey.length === 0) throw new Error("startLettaListener: apiKey must be non-empty");
  const child = spawnPeerProcess({
    label: `letta listener (${options.envName})`,
    args: ["server", "--env-name", options.envName, "--debug", ...(options.args ?? [])],
    env: {
      LETTA_API_KEY: options.apiKey,
      LETTA_BASE_URL: options.relayUrl,
      IGNORE_SELF_HOSTED_LISTENER_ERROR: "1",
      LLAMA_CPP_BASE_URL: options.modelUrl,
      ...options.env,
    },
  });
  const listener: LettaListener = {
    pid: child.pid,
    home: child.home,
    stdoutLines: child.stdoutLines,
    stderrLines: child.stderrLines,
    exited: child.exited,
    hasExited: child.hasExited,
    output: child.output,
    waitForLine: child.waitForLine,
    async waitUntilConnected(waitOptions = {}) {
      await child.waitForLine(CONNECTED_LINE, {
        timeoutMs: waitOptions.timeoutMs ?? 30_000,
        occurrence: waitOptions.occurrence ?? 1,
        description: "`Connected. Awaiting instructions.` line",
      });
    },
    stop: () => child.stop(),
  };
  if (!options.skipReadyWait) {
    try {
      await listener.waitUntilConnected({ timeoutMs: options.readyTimeoutMs ?? 30_000 });
    } catch (error) {
      await child.stop();
      throw error;
    }
  }
  return listener;
}
