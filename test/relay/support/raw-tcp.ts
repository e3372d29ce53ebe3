/**
 * Raw TCP clients of the relay, for connection-level bounds: a connection from a chosen
 * loopback address (127.0.0.2, …) that sends nothing or only part of an upgrade request and
 * records what the relay answers and when it closes the connection.
 */
import { connect, type Socket } from "node:net";

export interface RawConnection {
  socket: Socket;
  /** Everything the relay sent. */
  received(): string;
  /** True once the relay closed the connection (we never close it first unless `destroy()` is called). */
  readonly closed: boolean;
  /** Resolves when the connection is closed, with the time it took since it connected (ms). */
  whenClosed: Promise<number>;
  destroy(): void;
}

/**
 * Opens a TCP connection to `port` on 127.0.0.1 from `localAddress` and writes `send` once
 * connected (default: nothing). Resolves once connected.
 */
export function rawConnection(port: number, options: { localAddress?: string; send?: string } = {}): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress: options.localAddress ?? "127.0.0.1" });
    const chunks: Buffer[] = [];
    let closed = false;
    let connectedAt = 0;
    let markClosed!: (ms: number) => void;
    const whenClosed = new Promise<number>((done) => (markClosed = done));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("close", () => {
      closed = true;
      markClosed(performance.now() - connectedAt);
    });
    socket.once("error", (error) => {
      if (connectedAt === 0) reject(error);
    });
    socket.on("error", () => {});
    socket.once("connect", () => {
      connectedAt = performance.now();
      if (options.send) socket.write(options.send);
      resolve({
        socket,
        received: () => Buffer.concat(chunks).toString("latin1"),
        get closed() {
          return closed;
        },
        whenClosed,
        destroy: () => socket.destroy(),
      });
    });
  });
}

/** The first lines of an upgrade request, without the blank line that would end it. */
export function partialUpgrade(port: number, path = "/v1/environments/x/status/ws?channel=control"): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n`;
}
