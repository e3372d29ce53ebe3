/**
 * Plain TCP endpoints on loopback for the fault-proxy tests: a target server
 * that records (and optionally echoes) what it gets, and a client that records
 * what it gets. Both record FIN, RST and close, so each test can tell them apart.
 */
import { connect, createServer, type AddressInfo, type Socket } from "node:net";

/** One side of a TCP connection, as observed. */
export interface Endpoint {
  socket: Socket;
  /** Every chunk received, in order. */
  chunks: Buffer[];
  /** The peer's FIN arrived. */
  ended: boolean;
  /** The socket is closed. */
  closed: boolean;
  /** Error code (ECONNRESET, EPIPE, ...) if the socket failed. */
  errorCode: string | undefined;
}

function observe(socket: Socket, onData?: (chunk: Buffer) => void): Endpoint {
  const endpoint: Endpoint = { socket, chunks: [], ended: false, closed: false, errorCode: undefined };
  socket.on("data", (chunk: Buffer) => {
    endpoint.chunks.push(chunk);
    onData?.(chunk);
  });
  socket.on("end", () => {
    endpoint.ended = true;
  });
  socket.on("error", (error: NodeJS.ErrnoException) => {
    endpoint.errorCode ??= error.code ?? error.message;
  });
  socket.on("close", () => {
    endpoint.closed = true;
  });
  return endpoint;
}

/** All bytes received so far, as UTF-8 text. */
export function textOf(endpoint: Endpoint): string {
  return Buffer.concat(endpoint.chunks).toString("utf8");
}

export interface TcpTarget {
  port: number;
  connections: Endpoint[];
  close(): Promise<void>;
}

/** A target server; with `echo`, every chunk is written back as it arrives. Half-open sockets stay half-open. */
export async function startTcpTarget(options: { echo?: boolean } = {}): Promise<TcpTarget> {
  const connections: Endpoint[] = [];
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    connections.push(observe(socket, options.echo ? (chunk) => socket.write(chunk) : undefined));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const connection of connections) connection.socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Connect to `port` on loopback; resolves once connected (or once it failed, with `errorCode` set). */
export async function connectClient(port: number, sockets: Socket[]): Promise<Endpoint> {
  const socket = connect({ host: "127.0.0.1", port, allowHalfOpen: true });
  sockets.push(socket);
  const endpoint = observe(socket);
  await new Promise<void>((resolve) => {
    socket.once("connect", () => resolve());
    socket.once("close", () => resolve());
  });
  return endpoint;
}
