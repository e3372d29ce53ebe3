/**
 * A plain TCP round-robin balancer on loopback, like a cloud L4 load balancer in front of relay
 * nodes: no sticky sessions, each new client connection goes to the next target. A target that
 * refuses the connect (a killed node) is skipped for the next one, at most one pass over the
 * targets; when none accepts, the client's socket is destroyed. Bytes are piped both ways; when one
 * side closes, its partner is ended (destroyed at once on an error). Nothing here throws or leaves an
 * error unhandled.
 */
import { connect, createServer, type AddressInfo, type Socket } from "node:net";

/** Where the proxy forwards connections. */
export interface ProxyTarget {
  host: string;
  port: number;
}

/** A running {@link startRoundRobinProxy}. */
export interface RoundRobinProxy {
  readonly port: number;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Replaces the targets for the next connections (a killed node is removed by the test, or stays and its connects fail). */
  setTargets(targets: ProxyTarget[]): void;
  /** Client connections open now. */
  connections(): number;
  /** Accepted (connected) connections per target `host:port` so far. */
  counts(): Record<string, number>;
  /** Stops listening and destroys every open connection, both sides. */
  close(): Promise<void>;
}

class RoundRobinBalancer {
  #targets: ProxyTarget[];
  #next = 0;
  readonly #counts: Record<string, number> = {};
  readonly #clients = new Set<Socket>();
  readonly #upstreams = new Set<Socket>();

  constructor(targets: ProxyTarget[]) {
    this.#targets = [...targets];
  }

  setTargets(targets: ProxyTarget[]): void {
    this.#targets = [...targets];
  }

  connections(): number {
    return this.#clients.size;
  }

  counts(): Record<string, number> {
    return { ...this.#counts };
  }

  accept(client: Socket): void {
    this.#clients.add(client);
    client.on("error", () => client.destroy());
    client.once("close", () => this.#clients.delete(client));
    // Bytes the client sends before the upstream is connected wait in its (paused) readable side.
    this.#forward(client, this.#targets.length);
  }

  destroyAll(): void {
    for (const socket of [...this.#clients, ...this.#upstreams]) socket.destroy();
    this.#clients.clear();
    this.#upstreams.clear();
  }

  #forward(client: Socket, attemptsLeft: number): void {
    const targets = this.#targets;
    if (attemptsLeft <= 0 || targets.length === 0 || client.destroyed) {
      client.destroy();
      return;
    }
    const target = targets[this.#next++ % targets.length]!;
    const upstream = connect({ host: target.host, port: target.port, noDelay: true });
    this.#upstreams.add(upstream);
    upstream.once("close", () => this.#upstreams.delete(upstream));
    const onClientGone = () => upstream.destroy();
    client.once("close", onClientGone);
    upstream.once("error", () => {
      upstream.destroy();
      client.off("close", onClientGone);
      this.#forward(client, attemptsLeft - 1);
    });
    upstream.once("connect", () => {
      client.off("close", onClientGone);
      if (client.destroyed) {
        upstream.destroy();
        return;
      }
      const key = `${target.host}:${target.port}`;
      this.#counts[key] = (this.#counts[key] ?? 0) + 1;
      upstream.removeAllListeners("error");
      pipeTogether(client, upstream);
    });
  }
}

/** Pipes both ways; when one side closes, the other is ended after its pending writes (destroyed at once on an error). */
function pipeTogether(client: Socket, upstream: Socket): void {
  for (const [side, partner] of [
    [client, upstream],
    [upstream, client],
  ] as const) {
    side.on("error", () => side.destroy());
    side.once("close", (hadError: boolean) => {
      if (hadError) partner.destroy();
      else partner.destroySoon();
    });
    side.pipe(partner);
  }
}

/** Starts the balancer on a free loopback port, forwarding to `targets` in turn. */
export async function startRoundRobinProxy(targets: ProxyTarget[]): Promise<RoundRobinProxy> {
  const balancer = new RoundRobinBalancer(targets);
  const server = createServer({ noDelay: true }, (client) => balancer.accept(client));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", () => undefined);
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    setTargets: (next) => balancer.setTargets(next),
    connections: () => balancer.connections(),
    counts: () => balancer.counts(),
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        balancer.destroyAll();
      });
      return closed;
    },
  };
}
