/**
 * One proxied TCP connection of the fault proxy: the accepted client socket,
 * its upstream socket to the target, and a {@link FaultPipe} each way.
 *
 * Closes travel through like on a real path (a FIN after the queued bytes, a
 * reset as a reset) — except on a blackholed connection, where nothing
 * travels any more: each side only learns that the other is gone by its own
 * timeouts, exactly like a half-open TCP connection.
 */
import { connect, type Socket } from "node:net";
import { type TimerHandle, type Timers, unrefTimer } from "../internal/timers.js";
import { FaultPipe, type PipeCounters, type PipeFaults } from "./fault-proxy-pipe.js";

export interface ConnectionHooks {
  faults: PipeFaults;
  toTarget: PipeCounters;
  toClient: PipeCounters;
  timers: Timers;
  /** Both sockets are closed: forget the connection. */
  onClosed(connection: ProxiedConnection): void;
}

/** After a FIN has been sent both ways, sockets still open this long are destroyed. */
const CLOSE_FALLBACK_MS = 2_000;

export class ProxiedConnection {
  readonly client: Socket;
  readonly upstream: Socket | undefined;
  #toTarget: FaultPipe | undefined;
  #toClient: FaultPipe | undefined;
  #hooks: ConnectionHooks;
  #blackholed = false;
  #closedSides = 0;
  #fallback: TimerHandle | undefined;

  /**
   * @param blackholed start half-open: the target is never contacted and every client byte is dropped.
   * @param readingPaused start with reading from the client paused.
   */
  constructor(
    client: Socket,
    target: { host: string; port: number },
    hooks: ConnectionHooks,
    state: { blackholed: boolean; readingPaused: boolean },
  ) {
    this.client = client;
    this.#hooks = hooks;
    client.setNoDelay(true);
    client.on("error", () => undefined);
    if (state.blackholed) {
      this.#blackholed = true;
      this.upstream = undefined;
      client.on("data", (chunk: Buffer) => hooks.toTarget.dropped(chunk.length));
      client.on("end", () => client.destroy());
      client.on("close", () => this.#sideClosed());
      return;
    }
    const upstream = connect({ host: target.host, port: target.port, allowHalfOpen: true });
    this.upstream = upstream;
    upstream.setNoDelay(true);
    upstream.on("error", () => undefined);
    this.#toTarget = new FaultPipe(client, upstream, hooks.faults, hooks.toTarget, hooks.timers, () => this.#forwardEnd(upstream));
    this.#toClient = new FaultPipe(upstream, client, hooks.faults, hooks.toClient, hooks.timers, () => this.#forwardEnd(client));
    if (state.readingPaused) this.pauseReading(true);
    // On a blackholed connection a FIN only closes the proxy's own socket on that side.
    client.on("end", () => this.#blackholed && client.destroy());
    upstream.on("end", () => this.#blackholed && upstream.destroy());
    client.on("close", (hadError) => this.#onClose(upstream, hadError));
    upstream.on("close", (hadError) => this.#onClose(client, hadError));
  }

  get blackholed(): boolean {
    return this.#blackholed;
  }

  /** Drop every byte both ways from now on and stop forwarding closes (half-open). Sticky. */
  blackhole(): void {
    if (this.#blackholed) return;
    this.#blackholed = true;
    this.#toTarget?.blackhole();
    this.#toClient?.blackhole();
  }

  /** Stop (or resume) reading from the client socket. */
  pauseReading(on: boolean): void {
    this.#toTarget?.hold("user", on);
  }

  /** Abort both sockets with a TCP RST. */
  reset(): void {
    this.#dispose();
    resetSocket(this.client);
    if (this.upstream) resetSocket(this.upstream);
  }

  /** Close both sockets with a FIN (queued bytes are discarded); destroyed if still open after 2 s. */
  closeGracefully(): void {
    this.#dispose();
    this.client.end();
    this.upstream?.end();
    this.#armFallback();
  }

  /** Destroy both sockets now. */
  destroy(): void {
    this.#dispose();
    this.client.destroy();
    this.upstream?.destroy();
  }

  #onClose(other: Socket, hadError: boolean): void {
    this.#sideClosed();
    if (this.#blackholed || other.destroyed) return;
    if (hadError) {
      // A reset (or a failed connect to the target) travels on as a reset.
      this.#dispose();
      resetSocket(other);
      return;
    }
    // A clean close: the pipe forwards the FIN after its queue; make sure the other side ends too.
    this.#armFallback();
  }

  #forwardEnd(destination: Socket): void {
    if (this.#blackholed || destination.destroyed) return;
    destination.end();
  }

  #sideClosed(): void {
    this.#closedSides++;
    const sides = this.upstream === undefined ? 1 : 2;
    if (this.#closedSides < sides) return;
    this.#dispose();
    this.#hooks.onClosed(this);
  }

  #armFallback(): void {
    if (this.#fallback !== undefined) return;
    this.#fallback = this.#hooks.timers.setTimeout(() => {
      this.#fallback = undefined;
      this.client.destroy();
      this.upstream?.destroy();
    }, CLOSE_FALLBACK_MS);
    unrefTimer(this.#fallback);
  }

  #dispose(): void {
    this.#toTarget?.dispose();
    this.#toClient?.dispose();
    if (this.#fallback !== undefined && this.#closedSides >= (this.upstream === undefined ? 1 : 2)) {
      this.#hooks.timers.clearTimeout(this.#fallback);
      this.#fallback = undefined;
    }
  }
}

function resetSocket(socket: Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}
