/**
 * `startFaultProxy`: a TCP proxy on loopback that sits between a client (your
 * session) and a server (a scripted runtime, an app-server, a relay) and breaks
 * the path on command — reset, close, blackhole (half-open), latency, one byte
 * per write, paused reads, refused connections. It works below WebSocket, so
 * every fault is what a real network would do to the byte stream; nothing is
 * mocked. Use it in your own tests to check how your tools and session behave
 * when the link misbehaves.
 *
 * ```ts
 * const runtime = await startScriptedRuntime({ script });
 * const proxy = await startFaultProxy({ target: { host: "127.0.0.1", port: runtime.port } });
 * const session = await createSession({ backend: { kind: "local", url: `ws://127.0.0.1:${proxy.port}/ws` }, ... });
 * proxy.reset();                 // every connection gets a TCP RST
 * await proxy.close();
 * ```
 */
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { ToolrelayError } from "../errors.js";
import { systemTimers, type Timers } from "../internal/timers.js";
import { ProxiedConnection } from "./fault-proxy-connection.js";
import { isLoopbackHost } from "../internal/loopback-host.js";

/** Options of `startFaultProxy`. */
export interface StartFaultProxyOptions {
  /** Where every accepted connection is forwarded. Required. */
  target: { host: string; port: number };
  /** Interface to listen on. Loopback only (the proxy has no authentication). Default `"127.0.0.1"`. */
  host?: string | undefined;
  /** Port to listen on. Default `0` (an ephemeral port; read it from `proxy.port`). */
  port?: number | undefined;
  /** The clock of `latency()` and of the close fallback. Default: the system timers. */
  timers?: Timers | undefined;
}

/** Counters since the proxy started. */
export interface FaultProxyStats {
  /** Connections open now (refused ones excluded). */
  activeConnections: number;
  /** Connections accepted since the start, refused ones included. */
  acceptedConnections: number;
  /** Connections closed at once because `refuseNew(true)` was on. */
  refusedConnections: number;
  /** Bytes delivered from clients to the target. */
  bytesToTarget: number;
  /** Bytes delivered from the target to clients. */
  bytesToClient: number;
  /** Bytes discarded: by the blackhole, or queued for a socket that was already gone. */
  bytesDropped: number;
  /**
   * Blackholed connections whose client socket is still open: clients that have not noticed yet
   * that their connection is dead. (The target side of such a connection lingers until the
   * target's own timeouts close it; it is counted in `activeConnections` until then.)
   */
  halfOpenConnections: number;
}

/** A running fault proxy. Every fault is off at the start; each control applies at once. */
export interface FaultProxy {
  /** The interface it listens on. */
  readonly host: string;
  /** The port it listens on; point your client at `host:port`. */
  readonly port: number;
  /** Counters (a fresh snapshot on every read). */
  readonly stats: FaultProxyStats;
  /** Abort every open connection with a TCP RST, both sides (`socket.resetAndDestroy()`). New connections work. */
  reset(): void;
  /** Close every open connection with a FIN, both sides (queued bytes are discarded). New connections work. */
  closeAll(): void;
  /**
   * `true`: every open connection, and every connection accepted while it is on, goes half-open —
   * both sockets stay open, every byte both ways is discarded and no close is forwarded (each end
   * only finds out through its own heartbeat). A connection that was blackholed stays so for good
   * (bytes were lost mid-stream); `false` only lets new connections through again. Default off.
   */
  blackhole(on: boolean): void;
  /** Delay every chunk by `ms` from the moment it arrives, both ways, in order. `0` turns it off. Default 0. */
  latency(ms: number): void;
  /** `true`: deliver one byte per write, one per event-loop turn, both ways. Default off. */
  byteByByte(on: boolean): void;
  /**
   * `true`: stop reading from the client side of every connection (open and new): its bytes wait
   * in the kernel buffers and the client's writes eventually stall. `false` resumes. Default off.
   */
  pauseReading(on: boolean): void;
  /** `true`: accept each new connection and close it at once, before any byte. Default off. */
  refuseNew(on: boolean): void;
  /** Turn every fault off (blackhole, latency, byte-by-byte, paused reads, refusals). Open connections stay. */
  clearFaults(): void;
  /** Stop listening and destroy every connection. Idempotent. */
  close(): Promise<void>;
}

function checkPort(name: string, port: unknown, allowZero: boolean): number {
  if (typeof port !== "number" || !Number.isInteger(port) || port < (allowZero ? 0 : 1) || port > 65_535) {
    throw new ToolrelayError("INVALID_OPTIONS", `startFaultProxy: \`${name}\` must be an integer port (got ${String(port)})`);
  }
  return port;
}

/** Start a fault proxy to `options.target`. Resolves once it listens; `await proxy.close()` in teardown. */
export async function startFaultProxy(options: StartFaultProxyOptions): Promise<FaultProxy> {
  const target = options?.target;
  if (!target || typeof target.host !== "string" || target.host === "") {
    throw new ToolrelayError("INVALID_OPTIONS", "startFaultProxy: `target` must be { host, port }");
  }
  const targetPort = checkPort("target.port", target.port, false);
  const host = options.host ?? "127.0.0.1";
  if (!isLoopbackHost(host)) {
    throw new ToolrelayError("INVALID_OPTIONS", `startFaultProxy: refusing to listen on non-loopback host ${host}`);
  }
  const port = checkPort("port", options.port ?? 0, true);

  const faults = { blackhole: false, latencyMs: 0, byteByByte: false, readingPaused: false, refuseNew: false };
  const counters = { accepted: 0, refused: 0, toTarget: 0, toClient: 0, dropped: 0 };
  const connections = new Set<ProxiedConnection>();
  const hooks = {
    timers: options.timers ?? systemTimers,
    faults: { latencyMs: () => faults.latencyMs, byteByByte: () => faults.byteByByte },
    toTarget: {
      delivered: (bytes: number) => {
        counters.toTarget += bytes;
      },
      dropped: (bytes: number) => {
        counters.dropped += bytes;
      },
    },
    toClient: {
      delivered: (bytes: number) => {
        counters.toClient += bytes;
      },
      dropped: (bytes: number) => {
        counters.dropped += bytes;
      },
    },
    onClosed: (connection: ProxiedConnection) => {
      connections.delete(connection);
    },
  };

  let closing: Promise<void> | undefined;
  const server: Server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (client: Socket) => {
    counters.accepted++;
    if (faults.refuseNew || closing !== undefined) {
      counters.refused++;
      client.on("error", () => undefined);
      client.destroy();
      return;
    }
    const connection = new ProxiedConnection(client, { host: target.host, port: targetPort }, hooks, {
      blackholed: faults.blackhole,
      readingPaused: faults.readingPaused,
    });
    connections.add(connection);
    if (!faults.readingPaused || connection.blackholed) client.resume();
  });
  server.on("error", () => undefined);

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) =>
      reject(new ToolrelayError("INVALID_OPTIONS", `startFaultProxy: cannot listen on ${host}:${port}`, { cause: error }));
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });

  const address = server.address() as AddressInfo;
  const each = (action: (connection: ProxiedConnection) => void) => {
    for (const connection of [...connections]) action(connection);
  };
  const blackhole = (on: boolean): void => {
    faults.blackhole = on;
    if (on) each((connection) => connection.blackhole());
  };
  const latency = (ms: number): void => {
    if (!(ms >= 0) || !Number.isFinite(ms))
      throw new ToolrelayError("INVALID_OPTIONS", `latency(ms) needs a finite ms >= 0 (got ${String(ms)})`);
    faults.latencyMs = ms;
  };
  const pauseReading = (on: boolean): void => {
    faults.readingPaused = on;
    each((connection) => connection.pauseReading(on));
  };

  return {
    host,
    port: address.port,
    get stats(): FaultProxyStats {
      return {
        activeConnections: connections.size,
        acceptedConnections: counters.accepted,
        refusedConnections: counters.refused,
        bytesToTarget: counters.toTarget,
        bytesToClient: counters.toClient,
        bytesDropped: counters.dropped,
        halfOpenConnections: [...connections].filter((connection) => connection.blackholed && !connection.client.destroyed).length,
      };
    },
    reset() {
      each((connection) => connection.reset());
    },
    closeAll() {
      each((connection) => connection.closeGracefully());
    },
    blackhole,
    latency,
    byteByByte(on) {
      faults.byteByByte = on;
    },
    pauseReading,
    refuseNew(on) {
      faults.refuseNew = on;
    },
    clearFaults() {
      blackhole(false);
      latency(0);
      faults.byteByByte = false;
      pauseReading(false);
      faults.refuseNew = false;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        each((connection) => connection.destroy());
      });
      return closing;
    },
  };
}
