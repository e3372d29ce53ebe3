/**
 * Real `nats-server` processes with JetStream, for the relay cluster's tests: one server, or a
 * 3-node cluster (a config file per server, routes to the two others), on free loopback ports, each
 * with its own store in one temporary folder that {@link NatsServers.stop} removes. The processes are
 * killed (and the folder removed) if the test process exits first. The binary is `nats-server` on
 * the PATH, or `NATS_SERVER_BINARY`. nats-server 2.9 rejects `sync_interval`: the configs leave it out.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { get } from "node:http";
import { type AddressInfo, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";

/** One `nats-server` process; it keeps its name, ports and store across {@link NatsServerProcess.restart}. */
export interface NatsServerProcess {
  readonly name: string;
  /** The client URL, `nats://127.0.0.1:<port>`. */
  readonly url: string;
  /** The monitoring endpoint, `http://127.0.0.1:<port>` (`/varz`, `/jsz`, `/healthz`). */
  readonly monitorUrl: string;
  /** The JetStream `store_dir` of this server (inside the folder {@link NatsServers.stop} removes). */
  readonly storeDir: string;
  /** The current process id (a new one after {@link NatsServerProcess.restart}); -1 before it started. */
  readonly pid: number;
  /** kill -9 (default) or another signal; resolves when the process is gone (SIGKILL after 10 s if it stays). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again with the same name, ports and store (a killed cluster member rejoining); resolves once `/healthz` is ok. */
  restart(): Promise<void>;
}

/** The servers of one {@link startNatsServers} call. */
export interface NatsServers {
  /** Every server's client URL: pass them all as `servers` to `connect`. */
  readonly urls: string[];
  readonly servers: NatsServerProcess[];
  /** The JetStream meta leader among the running servers (waits up to 20 s for an election). */
  metaLeader(): Promise<NatsServerProcess>;
  /** The running server leading the stream `stream` (a KV bucket `b` is the stream `KV_b`); waits up to 20 s. */
  streamLeader(stream: string): Promise<NatsServerProcess>;
  /** Kills every process and removes the stores. Idempotent. */
  stop(): Promise<void>;
}

const BINARY = process.env.NATS_SERVER_BINARY ?? "nats-server";
const READY_TIMEOUT_MS = 20_000;
const TAIL_LINES = 40;

const liveChildren = new Set<ChildProcess>();
const liveFolders = new Set<string>();
process.once("exit", () => {
  for (const child of liveChildren) child.kill("SIGKILL");
  for (const folder of liveFolders) removeFolder(folder);
});

/** The part of `/jsz?streams=true` the helpers read. */
interface JszReply {
  meta_cluster?: { leader?: string };
  account_details?: Array<{ stream_detail?: Array<{ name: string; cluster?: { leader?: string } }> }>;
}

class ManagedNatsServer implements NatsServerProcess {
  readonly name: string;
  readonly url: string;
  readonly monitorUrl: string;
  readonly storeDir: string;
  readonly #configPath: string;
  readonly #tail: string[] = [];
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();

  constructor(name: string, clientPort: number, monitorPort: number, folder: string, cluster?: { port: number; routePorts: number[] }) {
    this.name = name;
    this.url = `nats://127.0.0.1:${clientPort}`;
    this.monitorUrl = `http://127.0.0.1:${monitorPort}`;
    this.storeDir = join(folder, name);
    this.#configPath = join(folder, `${name}.conf`);
    mkdirSync(this.storeDir);
    const lines = [
      `server_name: ${JSON.stringify(name)}`,
      `listen: "127.0.0.1:${clientPort}"`,
      `http: "127.0.0.1:${monitorPort}"`,
      `jetstream { store_dir: ${JSON.stringify(this.storeDir)} }`,
    ];
    if (cluster) {
      const routes = cluster.routePorts.map((port) => `"nats-route://127.0.0.1:${port}"`).join(", ");
      lines.push(`cluster { name: "toolrelay-test", listen: "127.0.0.1:${cluster.port}", routes: [${routes}] }`);
    }
    writeFileSync(this.#configPath, `${lines.join("\n")}\n`);
  }

  get pid(): number {
    return this.#child?.pid ?? -1;
  }

  /** Whether the process is up (spawned and not exited). */
  get running(): boolean {
    const child = this.#child;
    return child !== undefined && child.exitCode === null && child.signalCode === null && child.pid !== undefined;
  }

  /** The last lines the process wrote (stdout and stderr, every run). */
  tail(): string {
    return `--- ${this.name} (${this.url}) ---\n${this.#tail.join("\n")}`;
  }

  start(): void {
    const child = spawn(BINARY, ["-c", this.#configPath], { stdio: ["ignore", "pipe", "pipe"] });
    this.#child = child;
    liveChildren.add(child);
    this.#exited = new Promise((resolve) => {
      child.once("error", (error) => {
        this.#remember(`spawn ${BINARY}: ${error.message}`);
        liveChildren.delete(child);
        resolve();
      });
      child.once("exit", (code, signal) => {
        this.#remember(`[exited: ${signal ?? `code ${code}`}]`);
        liveChildren.delete(child);
        resolve();
      });
    });
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding("utf8");
      stream?.on("data", (text: string) => {
        for (const line of text.split(/\r?\n/)) if (line !== "") this.#remember(line);
      });
    }
  }

  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    if (!this.running) return;
    this.#child?.kill(signal);
    const timer = setTimeout(() => this.#child?.kill("SIGKILL"), 10_000);
    await this.#exited;
    clearTimeout(timer);
  }

  async restart(): Promise<void> {
    await this.kill();
    this.start();
    await pollUntil(async () => (await getJson(`${this.monitorUrl}/healthz`))?.status === 200 || undefined, `${this.name} healthy`, [this]);
  }

  #remember(line: string): void {
    this.#tail.push(line);
    if (this.#tail.length > TAIL_LINES) this.#tail.shift();
  }
}

/**
 * Starts `count` (1 or 3) JetStream servers and resolves once JetStream answers cluster-wide: every
 * `/healthz` is ok, every server names the same meta leader, and a client's `getAccountInfo()` works.
 * Throws (with the servers' output) if that takes over 20 s or a process exits.
 */
export async function startNatsServers(options: { count?: 1 | 3 } = {}): Promise<NatsServers> {
  const count = options.count ?? 1;
  const folder = mkdtempSync(join(tmpdir(), "toolrelay-nats-"));
  liveFolders.add(folder);
  const ports = await freePorts(count * 3);
  const servers: ManagedNatsServer[] = [];
  for (let index = 0; index < count; index++) {
    const [clientPort, monitorPort, clusterPort] = ports.slice(index * 3, index * 3 + 3) as [number, number, number];
    const routePorts = ports.filter((_, at) => at % 3 === 2 && at !== index * 3 + 2);
    const cluster = count > 1 ? { port: clusterPort, routePorts } : undefined;
    servers.push(new ManagedNatsServer(`n${index + 1}`, clientPort, monitorPort, folder, cluster));
  }
  const urls = servers.map((server) => server.url);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= Promise.all(servers.map((server) => server.kill())).then(() => {
      removeFolder(folder);
      liveFolders.delete(folder);
    }));
  const running = () => servers.filter((server) => server.running);

  for (const server of servers) server.start();
  try {
    await pollUntil(async () => (await jetStreamReady(servers, urls)) || undefined, `JetStream ready on ${count} server(s)`, servers);
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    urls,
    servers,
    stop,
    metaLeader: () =>
      pollUntil(
        async () => {
          for (const server of running()) {
            if ((await getJson(`${server.monitorUrl}/jsz?leader-only=true`))?.status === 200) return server;
          }
          return undefined;
        },
        "a JetStream meta leader",
        running(),
      ),
    streamLeader: (stream) =>
      pollUntil(
        async () => {
          for (const server of running()) {
            const details = (await getJson(`${server.monitorUrl}/jsz?streams=true`))?.body?.account_details ?? [];
            for (const detail of details.flatMap((account) => account.stream_detail ?? [])) {
              if (detail.name !== stream) continue;
              const leader = detail.cluster?.leader;
              if (leader === server.name || (leader === undefined && count === 1)) return server;
            }
          }
          return undefined;
        },
        `the leader of stream ${stream}`,
        running(),
      ),
  };
}

async function jetStreamReady(servers: ManagedNatsServer[], urls: string[]): Promise<boolean> {
  const leaders = new Set<string | undefined>();
  for (const server of servers) {
    if ((await getJson(`${server.monitorUrl}/healthz`))?.status !== 200) return false;
    if (servers.length > 1) leaders.add((await getJson(`${server.monitorUrl}/jsz`))?.body?.meta_cluster?.leader);
  }
  if (servers.length > 1 && (leaders.size !== 1 || !servers.some((server) => leaders.has(server.name)))) return false;
  const connection = await connect({ servers: urls, timeout: 2_000, reconnect: false }).catch(() => undefined);
  if (!connection) return false;
  try {
    await (await jetstreamManager(connection, { timeout: 2_000 })).getAccountInfo();
    return true;
  } catch {
    return false;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** Polls `check` every 50 ms until it gives a value; throws with the servers' output after 20 s, or when one of `mustRun` exits. */
async function pollUntil<T>(check: () => Promise<T | undefined>, what: string, mustRun: ManagedNatsServer[]): Promise<T> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    const gone = mustRun.filter((server) => !server.running);
    if (gone.length > 0 || Date.now() > deadline) {
      const why = gone.length > 0 ? `${gone.map((server) => server.name).join(", ")} exited` : `not within ${READY_TIMEOUT_MS} ms`;
      throw new Error(`nats-servers: waiting for ${what}: ${why}\n${mustRun.map((server) => server.tail()).join("\n")}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** GET `url` on a connection of its own: the status and the parsed JSON (if it is JSON), or undefined when unreachable. */
function getJson(url: string): Promise<{ status: number; body: JszReply | undefined } | undefined> {
  return new Promise((resolve) => {
    const request = get(url, { agent: false, timeout: 2_000 }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
      });
      response.on("error", () => resolve(undefined));
      response.on("end", () => {
        const status = response.statusCode ?? 0;
        try {
          // Only a 200 is JSON (`/jsz?leader-only=true` answers a follower with a 400 in plain text).
          resolve({ status, body: status === 200 ? (JSON.parse(text) as JszReply) : undefined });
        } catch {
          resolve({ status, body: undefined });
        }
      });
    });
    request.on("timeout", () => request.destroy());
    request.on("error", () => resolve(undefined));
  });
}

/** `count` distinct free loopback ports: all bound to port 0 at once, read, then closed. */
async function freePorts(count: number): Promise<number[]> {
  const listen = () =>
    new Promise<Server>((resolve, reject) => {
      const listener = createServer().once("error", reject);
      listener.listen(0, "127.0.0.1", () => resolve(listener));
    });
  const listeners = await Promise.all(Array.from({ length: count }, listen));
  const ports = listeners.map((listener) => (listener.address() as AddressInfo).port);
  await Promise.all(listeners.map((listener) => new Promise<void>((resolve) => listener.close(() => resolve()))));
  return ports;
}

function removeFolder(folder: string): void {
  try {
    rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    // A store a dying process still writes to: the next run uses a fresh folder anyway.
  }
}
