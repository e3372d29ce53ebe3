/**
 * A hostile server for the canary tests (127.0.0.1, port 0): it records every
 * upgrade request (URL, headers), and answers each one as its plan says —
 * accept (and answer `runtime_start` / tools updates like a runtime), or refuse
 * with 401 while ECHOING the presented Authorization header in the body and in
 * a `WWW-Authenticate` header. A test can close every socket with a reason that
 * contains the credential, or cut them. Whatever the SDK then reports must not
 * carry the credential.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

export type UpgradeAnswer = "accept" | "refuse-401";

export interface RecordedUpgrade {
  url: string;
  headers: IncomingMessage["headers"];
}

export class EchoingServer {
  readonly upgrades: RecordedUpgrade[] = [];
  /**
   * Close reasons the CLIENT chose when it closed a socket first. (When the server closes first,
   * `ws` echoes the server's own reason back in its close frame: that is the server's text, not
   * something the client disclosed, so it is not recorded here.)
   */
  readonly clientCloseReasons: string[] = [];
  #closedByServer = new WeakSet<WebSocket>();
  /** Answer for the n-th upgrade (by order of arrival); the last entry repeats. */
  plan: UpgradeAnswer[];
  #server: Server;
  #sockets = new WebSocketServer({ noServer: true });
  #open = new Set<WebSocket>();
  #runtime = { agent_id: "agent-canary", conversation_id: "conv-canary" };

  private constructor(server: Server, plan: UpgradeAnswer[]) {
    this.#server = server;
    this.plan = plan;
    server.on("upgrade", (request: IncomingMessage, socket: Socket, head: Buffer) => this.#upgrade(request, socket, head));
  }

  static async start(plan: UpgradeAnswer[]): Promise<EchoingServer> {
    const server = createServer((_request, response) => response.writeHead(404).end());
    const echoing = new EchoingServer(server, plan);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return echoing;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** Close every open socket with `code` and `reason` (the reason may carry the credential). */
  closeAll(code: number, reason: string): void {
    for (const socket of this.#open) {
      this.#closedByServer.add(socket);
      socket.close(code, reason);
    }
  }

  /** Cut every open socket (no close frame). */
  terminateAll(): void {
    for (const socket of this.#open) socket.terminate();
  }

  get openSockets(): number {
    return this.#open.size;
  }

  async close(): Promise<void> {
    this.terminateAll();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #upgrade(request: IncomingMessage, socket: Socket, head: Buffer): void {
    socket.on("error", () => undefined);
    const index = this.upgrades.length;
    this.upgrades.push({ url: request.url ?? "", headers: request.headers });
    const answer = this.plan[Math.min(index, this.plan.length - 1)] ?? "accept";
    if (answer === "refuse-401") {
      const presented = request.headers.authorization ?? "(none)";
      const body = JSON.stringify({ error: "unauthorized", message: `the key in "${presented}" is not valid` });
      socket.end(
        "HTTP/1.1 401 Unauthorized\r\n" +
          `WWW-Authenticate: Bearer error="invalid_token", error_description="${presented}"\r\n` +
          "Content-Type: application/json\r\nConnection: close\r\n" +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    this.#sockets.handleUpgrade(request, socket, head, (webSocket) => {
      this.#open.add(webSocket);
      webSocket.on("error", () => undefined);
      webSocket.on("close", (_code, reason) => {
        this.#open.delete(webSocket);
        if (!this.#closedByServer.has(webSocket)) this.clientCloseReasons.push(reason.toString());
      });
      webSocket.on("message", (data) => this.#answer(webSocket, data.toString()));
    });
  }

  #answer(socket: WebSocket, text: string): void {
    let frame: Record<string, unknown>;
    try {
      frame = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (frame.type === "runtime_start") {
      socket.send(JSON.stringify({ type: "runtime_start_response", request_id: frame.request_id, success: true, runtime: this.#runtime }));
    } else if (frame.type === "runtime_external_tools_update") {
      socket.send(JSON.stringify({ type: "runtime_external_tools_update_response", request_id: frame.request_id, success: true }));
    } else if (frame.type === "ping") {
      socket.send('{"type":"pong"}');
    }
  }
}
