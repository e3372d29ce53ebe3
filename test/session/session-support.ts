import { afterEach } from "vitest";
import { WebSocketServer } from "ws";
import type { Session } from "../../packages/toolrelay/src/index.js";
import { createSessionOnLink } from "../../packages/toolrelay/src/session/create-session.js";
import type { LinkSessionOptions } from "../../packages/toolrelay/src/session/session-options.js";
import {
  startScriptedRuntime,
  type ScriptedRuntime,
  type StartScriptedRuntimeOptions,
} from "../../packages/toolrelay/src/testing/index.js";

const runtimes: Array<{ close(): Promise<void> }> = [];
const sessions: Session[] = [];

/** A scripted runtime closed after the test. */
export async function scriptedRuntime(options: StartScriptedRuntimeOptions): Promise<ScriptedRuntime> {
  const runtime = await startScriptedRuntime(options);
  runtimes.push(runtime);
  return runtime;
}

/** A session on `runtime` (or on `options.backend`, an injected link too), closed after the test. */
export async function sessionOn(runtime: ScriptedRuntime, options: Partial<LinkSessionOptions> = {}): Promise<Session> {
  const session = await createSessionOnLink({
    backend: { kind: "local", url: runtime.url, pingIntervalMs: 0 },
    agent: { create: { model: "scripted/test" } },
    ...options,
  });
  sessions.push(session);
  return session;
}

afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close();
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

/** A promise with its resolver, for tools that wait on the test. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

type RawFrame = Record<string, unknown> & { type?: string; request_id?: string };

/** A bare app-server stand-in on loopback: `onFrame` decides every answer (for refusals and silence). */
export async function rawRuntime(onFrame: (frame: RawFrame, reply: (frame: unknown) => void) => void) {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  server.on("connection", (socket) => {
    socket.on("message", (data) => onFrame(JSON.parse(data.toString()) as RawFrame, (frame) => socket.send(JSON.stringify(frame))));
  });
  const port = (server.address() as { port: number }).port;
  const handle = {
    url: `ws://127.0.0.1:${port}/ws`,
    connections: () => [...server.clients].filter((client) => client.readyState === client.OPEN).length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
  runtimes.push(handle);
  return handle;
}
