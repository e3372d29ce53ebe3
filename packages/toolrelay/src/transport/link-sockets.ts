/**
 * The sockets of one connection of a link (the local link's one, the cloud link's control + stream):
 * opened together, written, pinged and closed the same way for both links.
 */
import type { RawData } from "ws";
import type WebSocket from "ws";
import { ToolrelayError, isToolrelayError } from "../errors.js";
import type { Timers } from "../internal/timers.js";
import { openWebSocket, type WebSocketConstructor } from "./open-web-socket.js";
import { beforeWrite } from "./tick-write-batch.js";

/** The open sockets of one connection of a link, by channel (the local link's one, the cloud link's control + stream). */
export type LinkSockets<Channel extends string> = Readonly<Record<Channel, WebSocket>>;

/** One message as `ws` reports it. */
export interface RawMessage {
  data: RawData;
  isBinary: boolean;
}

/** The sockets of a connection just opened, and what arrived on them before they were all open. */
export interface OpenedLinkSockets<Channel extends string> {
  sockets: LinkSockets<Channel>;
  /**
   * Take the messages that arrived on `channel` before every socket was open (a relay redelivers
   * on a socket as soon as it opens), in order, and stop keeping them.
   */
  takeEarly(channel: Channel): RawMessage[];
}

/** Where the sockets of one connection go. */
export interface LinkAddress<Channel extends string> {
  urls: Record<Channel, string>;
  headers: Record<string, string>;
}

export interface OpenLinkSocketsOptions<Channel extends string> extends LinkAddress<Channel> {
  channels: readonly Channel[];
  /**
   * Called synchronously when the last socket opens, with all of them, before the promise
   * resolves: attach the listeners here, or what arrives with the last handshake's answer (a
   * message, a close) is missed.
   */
  onOpen(opened: OpenedLinkSockets<Channel>): void;
  WebSocket?: WebSocketConstructor | undefined;
  maxPayload?: number | undefined;
  connectTimeoutMs?: number | undefined;
  timers: Timers;
  /** Text that must never appear in an error (the credentials' forms). */
  secrets: readonly string[];
}

/**
 * Open one socket per channel, in parallel, and hand them to `onOpen` once every one is open.
 * Messages that arrive on a socket before that are kept (`takeEarly`). If any fails, or one closes
 * before all are open, the others are terminated and the attempt rejects — with UNAUTHORIZED when a
 * socket got a 401/403, else with the first failure (NOT_FOUND for a 404, CONNECT_FAILED otherwise).
 */
export async function openLinkSockets<Channel extends string>(options: OpenLinkSocketsOptions<Channel>): Promise<void> {
  const { channels } = options;
  const sockets = {} as Record<Channel, WebSocket>;
  const early = new Map<Channel, RawMessage[]>();
  const keepers = new Map<Channel, (data: RawData, isBinary: boolean) => void>();
  let waiting = channels.length;
  let closedEarly: Channel | undefined;
  let handedOver = false;
  const takeEarly = (channel: Channel): RawMessage[] => {
    const keep = keepers.get(channel);
    if (keep) sockets[channel].off("message", keep);
    keepers.delete(channel);
    return early.get(channel)?.splice(0) ?? [];
  };
  const opened = (channel: Channel, socket: WebSocket): void => {
    sockets[channel] = socket;
    if (--waiting > 0) {
      // Frames can arrive the moment a socket opens, before the others are open: keep them.
      const kept: RawMessage[] = [];
      const keep = (data: RawData, isBinary: boolean) => void kept.push({ data, isBinary });
      early.set(channel, kept);
      keepers.set(channel, keep);
      socket.on("message", keep);
      socket.once("close", () => {
        closedEarly ??= channel;
      });
      return;
    }
    if (closedEarly !== undefined || channels.some((each) => sockets[each].readyState !== 1)) return;
    handedOver = true;
    options.onOpen({ sockets, takeEarly });
  };
  const results = await Promise.allSettled(
    channels.map((channel) =>
      openWebSocket(options.urls[channel], {
        onOpen: (socket) => opened(channel, socket),
        headers: options.headers,
        WebSocket: options.WebSocket,
        maxPayload: options.maxPayload,
        connectTimeoutMs: options.connectTimeoutMs,
        timers: options.timers,
        secrets: options.secrets,
      }),
    ),
  );
  if (handedOver) return;
  for (const socket of Object.values<WebSocket>(sockets)) socket.terminate();
  const failures = results.flatMap((result) => (result.status === "rejected" ? [result.reason as unknown] : []));
  if (failures.length === 0) {
    const which = closedEarly ?? channels.find((channel) => sockets[channel].readyState !== 1);
    throw new ToolrelayError("CONNECT_FAILED", `the ${which} socket closed before ${channels.length > 1 ? "all were" : "it was"} open`);
  }
  const first = failures.find((error) => isToolrelayError(error, "UNAUTHORIZED")) ?? failures[0];
  throw isToolrelayError(first) ? first : new ToolrelayError("CONNECT_FAILED", "the link's sockets could not be opened", { cause: first });
}

/** Write `text` on an open socket. `false` when it is not open or the write threw; a failed write surfaces as the socket closing. */
export function writeText(socket: WebSocket, text: string): boolean {
  if (socket.readyState !== 1) return false;
  try {
    beforeWrite(socket);
    socket.send(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * A heartbeat ping: a protocol-level ping (answered by any WebSocket peer), after a JSON `ping`
 * frame when `json` (a relay answers it with a JSON `pong`). A socket without `ping()` gets only
 * the JSON one.
 */
export function pingSocket(socket: WebSocket, json: boolean): void {
  if (json) writeText(socket, '{"type":"ping"}');
  if (socket.readyState !== 1 || typeof socket.ping !== "function") return;
  try {
    socket.ping();
  } catch {
    // A failed write surfaces as the socket closing.
  }
}

/** Close with 1000 and wait for the close handshake, at most `deadlineMs`; then terminate. Leaves no timer behind. */
export function closeSocketGracefully(socket: WebSocket, timers: Timers, deadlineMs = 1_000): Promise<void> {
  if (socket.readyState === 3) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = timers.setTimeout(() => {
      socket.terminate();
      resolve();
    }, deadlineMs);
    socket.once("close", () => {
      timers.clearTimeout(timer);
      resolve();
    });
    if (socket.readyState === 0) socket.terminate();
    else socket.close(1000, "link closed");
  });
}
