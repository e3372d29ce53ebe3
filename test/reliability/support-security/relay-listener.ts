/**
 * The smallest listener a relay accepts (for relays started with
 * `listenerMode: "single"`): register over REST, then one WebSocket at the
 * `wsUrl` of the answer. It records every text frame the relay forwards, so a
 * test can tell whether an SDK frame was processed.
 */
import { randomUUID } from "node:crypto";
import { request } from "node:http";
import { WebSocket } from "ws";

export interface RegisteredEnvironment {
  connectionId: string;
  wsUrl: string;
}

/** POST a JSON body; resolves with the status and the body text (deadline 3 s). */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers },
        timeout: 3_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(new Error(`POST ${url}: no answer within 3 s`)));
    outgoing.on("error", reject);
    outgoing.end(text);
  });
}

export class SingleSocketListener {
  /** Text frames the relay sent to the listener, in order. */
  readonly frames: string[] = [];
  readonly deviceId = `device-${randomUUID()}`;
  environment!: RegisteredEnvironment;
  socket: WebSocket | undefined;

  static async start(httpUrl: string, apiKey: string | undefined): Promise<SingleSocketListener> {
    const listener = new SingleSocketListener();
    const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
    const registered = await postJson(
      `${httpUrl}/v1/environments/register`,
      { deviceId: listener.deviceId, listenerInstanceId: "security-test", connectionName: "security-env", metadata: {} },
      headers,
    );
    if (registered.status !== 200) throw new Error(`register failed with HTTP ${registered.status}`);
    listener.environment = JSON.parse(registered.text) as RegisteredEnvironment;
    const url = new URL(listener.environment.wsUrl);
    url.searchParams.set("deviceId", listener.deviceId);
    url.searchParams.set("connectionName", "security-env");
    const socket = new WebSocket(url, { headers });
    listener.socket = socket;
    socket.on("error", () => undefined);
    socket.on("message", (data, isBinary) => {
      if (!isBinary) listener.frames.push(data.toString());
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("listener socket did not open within 3 s")), 3_000);
      socket.once("open", () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    return listener;
  }

  terminate(): void {
    this.socket?.terminate();
  }
}
