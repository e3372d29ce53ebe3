/**
 * The real Letta Code app-server (`letta server --listen`) as a child process for tests.
 * Start one per test file, next to a scripted model server:
 *
 * ```ts
 * const model = await startScriptedModelServer();
 * const peer = await startLettaAppServer({ modelUrl: model.url });
 * // ... new WebSocket(peer.url) ...
 * await peer.stop(); await model.close();
 * ```
 */
import { spawnPeerProcess, type PeerExit } from "./peer-process.js";

export { LETTA_CLI, LETTA_NODE_BINARY, LETTA_PEER_DIR, assertPeerInstalled } from "./peer-process.js";

export interface LettaAppServerOptions {
  /** OpenAI base URL of the model, ending in `/v1` (`ScriptedModelServer.url`); becomes `LLAMA_CPP_BASE_URL`. */
  modelUrl: string;
  /** Extra environment variables (override the defaults). */
  env?: Record<string, string>;
  /** Extra CLI arguments after `server --listen`. */
  args?: string[];
  /** Deadline for the `Listening on` line. Default 30 000 ms. */
  startTimeoutMs?: number;
}

export interface LettaAppServer {
  /** WebSocket URL, `ws://127.0.0.1:<port>/ws`. */
  readonly url: string;
  /** HTTP origin of the same port, `http://127.0.0.1:<port>` (`/readyz`, `/app-server-info`). */
  readonly httpUrl: string;
  readonly port: number;
  readonly pid: number;
  /** The temporary HOME (removed by stop()). */
  readonly home: string;
  readonly stdoutLines: string[];
  readonly stderrLines: string[];
  readonly exited: Promise<PeerExit>;
  output(): string;
  /** SIGTERM, SIGKILL after 1 s, waits for exit, removes HOME. Idempotent. */
  stop(): Promise<void>;
}

const LISTENING_LINE = /^Listening on\s+(ws:\/\/\S+)\s*$/;

export async function startLettaAppServer(options: LettaAppServerOptions): Promise<LettaAppServer> {
  const child = spawnPeerProcess({
    label: "letta app-server",
    args: ["server", "--listen", ...(options.args ?? [])],
    env: { LLAMA_CPP_BASE_URL: options.modelUrl, ...options.env },
  });
  let listening: string;
  try {
    const match = await child.waitForLine(LISTENING_LINE, {
      timeoutMs: options.startTimeoutMs ?? 30_000,
      description: "`Listening on ws://…` line",
    });
    listening = match[1]!;
  } catch (error) {
    await child.stop();
    throw error;
  }
  const address = new URL(listening);
  const path = address.pathname === "" || address.pathname === "/" ? "/ws" : address.pathname;
  return {
    url: `ws://${address.host}${path}`,
    httpUrl: `http://${address.host}`,
    port: Number(address.port),
    pid: child.pid,
    home: child.home,
    stdoutLines: child.stdoutLines,
    stderrLines: child.stderrLines,
    exited: child.exited,
    output: child.output,
    stop: () => child.stop(),
  };
}
