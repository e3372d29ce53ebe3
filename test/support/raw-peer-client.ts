/**
 * A raw `ws` client for the real peer that records every frame both ways, for fixtures and
 * harness tests. Deliberately independent of packages/toolrelay/src/ (no wire/ or transport/ code), so it can
 * check those against the real thing.
 */
import WebSocket from "ws";

export type FrameDirection = "inbound" | "outbound";

export interface RecordedFrame {
  direction: FrameDirection;
  /** Milliseconds since the client was created. */
  at: number;
  /** Parsed JSON (or `{ unparsed: text }` if the peer sent something that is not JSON). */
  frame: Record<string, unknown>;
}

export interface RawPeerClient {
  readonly socket: WebSocket;
  /** Every frame, both directions, in order (live array). */
  readonly transcript: RecordedFrame[];
  /** Inbound frames only (live array). */
  readonly received: Record<string, unknown>[];
  send(frame: Record<string, unknown>): void;
  /**
   * The first inbound frame (received at index >= `fromIndex`, default 0) matching `predicate`.
   * Default deadline 10 s; rejects with the frame types seen so far.
   */
  waitFor(
    predicate: (frame: Record<string, unknown>) => boolean,
    options?: { timeoutMs?: number; fromIndex?: number; description?: string },
  ): Promise<Record<string, unknown>>;
  /** Sends `frame` and waits for the inbound frame with the same `request_id` (and `responseType`, if given). */
  request(
    frame: Record<string, unknown> & { request_id: string },
    options?: { timeoutMs?: number; responseType?: string },
  ): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function connectRawPeerClient(
  url: string,
  options: { timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<RawPeerClient> {
  const started = Date.now();
  const socket = new WebSocket(url, { headers: options.headers });
  const transcript: RecordedFrame[] = [];
  const received: Record<string, unknown>[] = [];
  const wakers = new Set<() => void>();

  socket.on("message", (data: WebSocket.RawData) => {
    const text = data.toString();
    let frame: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(text);
      frame = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { unparsed: text };
    } catch {
      frame = { unparsed: text };
    }
    transcript.push({ direction: "inbound", at: Date.now() - started, frame });
    received.push(frame);
    for (const wake of [...wakers]) wake();
  });
  const closedPromise = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("close", () => {
    for (const wake of [...wakers]) wake();
  });

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`raw peer client: ${url} did not open within ${options.timeoutMs ?? 10_000} ms`));
    }, options.timeoutMs ?? 10_000);
    socket.once("open", () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
  socket.on("error", () => {
    // Surfaced through close; keep the process alive.
  });

  const client: RawPeerClient = {
    socket,
    transcript,
    received,
    send(frame) {
      transcript.push({ direction: "outbound", at: Date.now() - started, frame });
      socket.send(JSON.stringify(frame));
    },
    waitFor(predicate, waitOptions = {}) {
      const timeoutMs = waitOptions.timeoutMs ?? 10_000;
      const fromIndex = waitOptions.fromIndex ?? 0;
      const find = () => received.slice(fromIndex).find(predicate);
      const found = find();
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const finish = (error?: Error, frame?: Record<string, unknown>) => {
          clearTimeout(timer);
          wakers.delete(check);
          if (error) reject(error);
          else resolve(frame!);
        };
        const check = () => {
          const match = find();
          if (match) return finish(undefined, match);
          if (socket.readyState === WebSocket.CLOSED) {
            finish(new Error(`raw peer client: socket closed while waiting for ${waitOptions.description ?? "a frame"}`));
          }
        };
        const timer = setTimeout(() => {
          const seen = received.slice(fromIndex).map((frame) => String(frame.type));
          finish(
            new Error(
              `raw peer client: no ${waitOptions.description ?? "matching frame"} within ${timeoutMs} ms; saw [${seen.join(", ")}]`,
            ),
          );
        }, timeoutMs);
        wakers.add(check);
      });
    },
    request(frame, requestOptions = {}) {
      const fromIndex = received.length;
      client.send(frame);
      return client.waitFor(
        (candidate) =>
          candidate.request_id === frame.request_id &&
          candidate.type !== frame.type &&
          (requestOptions.responseType === undefined || candidate.type === requestOptions.responseType),
        {
          timeoutMs: requestOptions.timeoutMs,
          fromIndex,
          description: `response to ${String(frame.type)} ${frame.request_id}`,
        },
      );
    },
    async close() {
      if (socket.readyState === WebSocket.CLOSED) return;
      socket.close();
      const timer = setTimeout(() => socket.terminate(), 1000);
      await closedPromise;
      clearTimeout(timer);
    },
  };
  return client;
}
