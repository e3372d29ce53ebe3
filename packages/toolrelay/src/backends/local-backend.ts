import { ToolrelayError } from "../errors.js";
import type { Timers } from "../internal/timers.js";
import { LocalLink, type LocalLinkOptions } from "../transport/local-link.js";
import { checkAppServerVersion, explainSpawnFailure } from "./letta-code-version.js";
import { spawnLettaServer, type SpawnLettaServerOptions, type SpawnedLettaServer } from "./spawn-letta-server.js";

/** What both forms of the local backend take: the socket's options. */
export interface LocalBackendSocketOptions extends Omit<LocalLinkOptions, "url" | "timers"> {
  kind: "local";
}

/** A running app-server: `{ kind: "local", url }`. */
export interface LocalBackendUrlOptions extends LocalBackendSocketOptions {
  /** The app-server's WebSocket address, e.g. `ws://127.0.0.1:4500/ws`. */
  url: string;
  /** Not with `url`. */
  spawn?: undefined;
}

/** A server the SDK starts: `{ kind: "local", spawn }`. */
export interface LocalBackendSpawnOptions extends LocalBackendSocketOptions {
  /** Start `letta server --listen` for this session (stopped on close). `true` uses the defaults. */
  spawn: SpawnLettaServerOptions | true;
  /** Not with `spawn`. */
  url?: undefined;
}

/**
 * A Letta Code app-server on this machine (`letta server --listen`). Name its
 * address with `url`, or ask the SDK to start one with `spawn` — exactly one of
 * them (a type error otherwise, and `INVALID_OPTIONS` at run time); there is no
 * default address.
 */
export type LocalBackendOptions = LocalBackendUrlOptions | LocalBackendSpawnOptions;

export interface LocalBackendConnection {
  link: LocalLink;
  /** The server the session started, if any. */
  server: SpawnedLettaServer | undefined;
  /** Stop what the backend started (the spawned server). */
  dispose(): Promise<void>;
}

export async function createLocalBackend(options: LocalBackendOptions, timers: Timers): Promise<LocalBackendConnection> {
  if ((options.url === undefined) === (options.spawn === undefined)) {
    throw new ToolrelayError(
      "INVALID_OPTIONS",
      'backend { kind: "local" } needs exactly one of `url` (a running app-server) or `spawn` (start `letta server --listen`)',
    );
  }
  let server: SpawnedLettaServer | undefined;
  let url = options.url;
  if (options.spawn !== undefined) {
    const spawnOptions = options.spawn === true ? {} : options.spawn;
    server = await spawnLettaServer(spawnOptions, timers).catch(explainSpawnFailure(spawnOptions, timers));
    url = server.url;
  }
  await checkAppServerVersion(url!, options, timers, server);
  const { kind: _kind, spawn: _spawn, url: _url, ...linkOptions } = options;
  const link = new LocalLink({ ...linkOptions, url: url!, timers });
  return {
    link,
    server,
    async dispose() {
      await server?.stop();
    },
  };
}
