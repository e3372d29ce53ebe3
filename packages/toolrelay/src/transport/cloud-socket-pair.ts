import type { RawData } from "ws";
import type WebSocket from "ws";
import { ToolrelayError, isToolrelayError } from "../errors.js";
import type { Timers } from "../internal/timers.js";
import type { CloudChannel } from "./cloud-status-address.js";
import { openWebSocket, redact, type WebSocketConstructor } from "./open-web-socket.js";
import { SequenceAckTracker } from "./sequence-ack-tracker.js";
import { beforeWrite } from "./tick-write-batch.js";

/** One generation of the cloud link's sockets: control + stream, each with its own ack tracker. */
export interface SocketPair {
  control: WebSocket;
  stream: WebSocket;
  acks: Record<CloudChannel, SequenceAckTracker>;
  /**
   * Take the frames that arrived on `channel` before the pair was complete (a relay
   * redelivers on a socket as soon as it opens), in order, and stop buffering.
   */
  takeEarly(channel: CloudChannel): Array<{ data: RawData; isBinary: boolean }>;
}

export interface OpenSocketPairOptions {
  urls: Record<CloudChannel, string>;
  headers: Record<string, string>;
  WebSocket?: WebSocketConstructor;
  maxPayload?: number;
  connectTimeoutMs?: number;
  timers: Timers;
  secrets: readonly string[];
}

/**
 * Open the control and the stream socket in parallel; resolve only when both
 * are open. If either fails (or closes before both are open), the other is
 * terminated and the attempt rejects — with UNAUTHORIZED when either socket
 * got a 401/403, CONNECT_FAILED otherwise.
 */
export async function openSocketPair(options: OpenSocketPairOptions): Promise<SocketPair> {
  let closedEarly: CloudChannel | undefined;
  // Frames can arrive on a socket the moment it opens, before the other one is open: keep them.
  const early: Record<CloudChannel, Array<{ data: RawData; isBinary: boolean }>> = { control: [], stream: [] };
  const buffering: Partial<Record<CloudChannel, (data: RawData, isBinary: boolean) => void>> = {};
  const open = async (channel: CloudChannel): Promise<WebSocket> => {
    const socket = await openWebSocket(options.urls[channel], {
      onOpen: (opened) => {
        const keep = (data: RawData, isBinary: boolean) => void early[channel].push({ data, isBinary });
        buffering[channel] = keep;
        opened.on("message", keep);
      },
      headers: options.headers,
      WebSocket: options.WebSocket,
      maxPayload: options.maxPayload,
      connectTimeoutMs: options.connectTimeoutMs,
      timers: options.timers,
      secrets: options.secrets,
    });
    socket.once("close", () => {
      closedEarly ??= channel;
    });
    return socket;
  };
  const [control, stream] = await Promise.allSettled([open("control"), open("stream")]);
  const opened = [control, stream].flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const failures = [control, stream].flatMap((result) => (result.status === "rejected" ? [result.reason as unknown] : []));
  if (failures.length > 0 || control.status !== "fulfilled" || stream.status !== "fulfilled") {
    for (const socket of opened) socket.terminate();
    const unauthorized = failures.find((error) => isToolrelayError(error, "UNAUTHORIZED"));
    const first = unauthorized ?? failures[0];
    throw isToolrelayError(first)
      ? first
      : new ToolrelayError("CONNECT_FAILED", "cloud status sockets could not be opened", { cause: first });
  }
  if (closedEarly !== undefined || control.value.readyState !== 1 || stream.value.readyState !== 1) {
    control.value.terminate();
    stream.value.terminate();
    throw new ToolrelayError("CONNECT_FAILED", `the ${closedEarly ?? "cloud status"} socket closed before both were open`);
  }
  const sockets = { control: control.value, stream: stream.value };
  return {
    ...sockets,
    acks: { control: new SequenceAckTracker(), stream: new SequenceAckTracker() },
    takeEarly(channel) {
      const keep = buffering[channel];
      if (keep) sockets[channel].off("message", keep);
      buffering[channel] = undefined;
      return early[channel].splice(0);
    },
  };
}

/** What a listened-to socket pair reports, per channel. */
export interface SocketPairListener {
  /** A message: its text, or `undefined` for a binary frame. The early ones come first, in arrival order. */
  message(channel: CloudChannel, text: string | undefined): void;
  /** A protocol-level ping from the server. */
  ping(channel: CloudChannel): void;
  /** A protocol-level pong. */
  pong(channel: CloudChannel): void;
  /** The socket closed; `detail` is its close reason and last error, secrets redacted (may be empty). */
  close(channel: CloudChannel, code: number, detail: string): void;
}

/**
 * Attach `listener` to both sockets of `pair`, then hand it the frames that came
 * before the pair was complete — in arrival order, control's then stream's,
 * before any later one.
 */
export function listenToSocketPair(pair: SocketPair, listener: SocketPairListener, secrets: readonly string[]): void {
  for (const channel of ["control", "stream"] as const) {
    const socket = pair[channel];
    socket.on("message", (data, isBinary) => listener.message(channel, socketText(data, isBinary)));
    socket.on("ping", () => listener.ping(channel));
    socket.on("pong", () => listener.pong(channel));
    let lastError = "";
    socket.on("error", (error) => {
      lastError = error.message;
    });
    socket.on("close", (code, reason) => {
      listener.close(channel, code, redact([reason.toString(), lastError].filter(Boolean).join("; "), secrets));
    });
  }
  for (const channel of ["control", "stream"] as const) {
    for (const early of pair.takeEarly(channel)) listener.message(channel, socketText(early.data, early.isBinary));
  }
}

/** Write `text` on an open socket. `false` when it is not open or the write threw; a failed write surfaces as the socket closing. */
export function sendText(socket: WebSocket, text: string): boolean {
  if (socket.readyState !== 1) return false;
  try {
    beforeWrite(socket);
    socket.send(text, () => {});
    return true;
  } catch {
    return false;
  }
}

/**
 * The cloud heartbeat's ping: a JSON `ping` frame, then a protocol-level ping
 * (answered by any WebSocket peer); a socket without `ping()` gets only the JSON one.
 */
export function pingSocket(socket: WebSocket): void {
  sendText(socket, '{"type":"ping"}');
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

/** The text of a `ws` message, or `undefined` for a binary frame. */
export function socketText(data: WebSocket.RawData, isBinary: boolean): string | undefined {
  if (isBinary) return undefined;
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}
