/**
 * A TCP proxy on loopback that can kill one direction of its connections and leave the other
 * working: what a path that went half-open one way looks like to each end. The in-repo fault
 * proxy (`toolrelay/testing`) blackholes both directions at once; this one takes a direction.
 *
 * A dead direction drops every byte and forwards no FIN or reset: the receiving end never hears
 * of the other end again. The live direction keeps delivering bytes and closes, as a network
 * would. Death is sticky per connection; connections accepted later pass untouched.
 */
import { connect, createServer, type AddressInfo, type Socket } from "node:net";

/** `to-target`: client → target (the SDK's writes to the relay); `to-client`: target → client. */
export type ProxyDirection = "to-target" | "to-client";

export interface HalfOpenProxy {
  readonly port: number;
  /** Connections open now. */
  readonly open: number;
  /** Connections accepted since the start. */
  readonly accepted: number;
  /** Bytes passed on, per direction. */
  readonly delivered: Readonly<Record<ProxyDirection, number>>;
  /** Bytes dropped by dead directions, per direction. */
  readonly dropped: Readonly<Record<ProxyDirection, number>>;
  /** Every open connection goes dead in `directions` from now on; returns how many connections that was. */
  kill(directions: readonly ProxyDirection[]): number;
  /** Destroy every connection and stop listening. Idempotent. */
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  dead: Record<ProxyDirection, boolean>;
}

export async function startHalfOpenProxy(target: { host: string; port: number }): Promise<HalfOpenProxy> {
  const pairs = new Set<Pair>();
  const delivered: Record<ProxyDirection, number> = { "to-target": 0, "to-client": 0 };
  const dropped: Record<ProxyDirection, number> = { "to-target": 0, "to-client": 0 };
  let accepted = 0;
  const server = createServer({ allowHalfOpen: true }, (client) => {
    accepted++;
    const upstream = connect({ host: target.host, port: target.port, allowHalfOpen: true });
    const pair: Pair = { client, upstream, dead: { "to-target": false, "to-client": false } };
    pairs.add(pair);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const pipe = (from: Socket, to: Socket, direction: ProxyDirection) => {
      from.on("data", (chunk: Buffer) => {
        if (pair.dead[direction] || to.destroyed) dropped[direction] += chunk.length;
        else {
          to.write(chunk);
          delivered[direction] += chunk.length;
        }
      });
      from.on("end", () => {
        if (!pair.dead[direction]) to.end();
      });
      from.on("error", () => undefined);
      from.on("close", (hadError) => {
        if (pair.dead[direction] || to.destroyed) return;
        if (hadError) to.resetAndDestroy();
        else to.end();
      });
    };
    pipe(client, upstream, "to-target");
    pipe(upstream, client, "to-client");
    const forget = () => {
      if (client.destroyed && upstream.destroyed) pairs.delete(pair);
    };
    client.on("close", forget);
    upstream.on("close", forget);
  });
  server.on("error", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  let closing: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    get open() {
      return pairs.size;
    },
    get accepted() {
      return accepted;
    },
    get delivered() {
      return { ...delivered };
    },
    get dropped() {
      return { ...dropped };
    },
    kill(directions) {
      for (const pair of pairs) for (const direction of directions) pair.dead[direction] = true;
      return pairs.size;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const pair of pairs) {
          pair.client.destroy();
          pair.upstream.destroy();
        }
      });
      return closing;
    },
  };
}
