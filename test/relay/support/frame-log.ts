/**
 * A log of the JSON frames one socket received, with deadline-bound waits. Shared by the raw
 * SDK client and the fake listener of the relay tests.
 */
import type { WebSocket } from "ws";

export type JsonFrame = Record<string, unknown> & { type?: string };

export class FrameLog {
  readonly frames: JsonFrame[] = [];
  private readonly waiters = new Set<() => void>();

  /** Records every text message of `socket` (and calls `onFrame` first). */
  attach(socket: WebSocket, onFrame?: (frame: JsonFrame) => void): void {
    socket.on("message", (data) => {
      let frame: JsonFrame;
      try {
        frame = JSON.parse(data.toString()) as JsonFrame;
      } catch {
        return;
      }
      onFrame?.(frame);
      this.frames.push(frame);
      for (const wake of [...this.waiters]) wake();
    });
  }

  /** Frames of `type` so far. */
  ofType(type: string): JsonFrame[] {
    return this.frames.filter((frame) => frame.type === type);
  }

  /**
   * The first frame at index >= `from` matching `predicate`; rejects after `timeoutMs`
   * (default 5 s) with the types seen, for a readable failure.
   */
  waitFor(
    predicate: (frame: JsonFrame) => boolean,
    options: { timeoutMs?: number; from?: number; what?: string } = {},
  ): Promise<JsonFrame> {
    const timeoutMs = options.timeoutMs ?? 5_000;
    return new Promise((resolve, reject) => {
      let from = options.from ?? 0;
      const check = (): boolean => {
        for (; from < this.frames.length; from++) {
          const frame = this.frames[from];
          if (frame && predicate(frame)) {
            cleanup();
            resolve(frame);
            return true;
          }
        }
        return false;
      };
      const timer = setTimeout(() => {
        cleanup();
        const seen = this.frames.map((frame) => frame.type).join(", ");
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? "a frame"}; seen: [${seen}]`));
      }, timeoutMs);
      const wake = (): void => {
        check();
      };
      const cleanup = (): void => {
        clearTimeout(timer);
        this.waiters.delete(wake);
      };
      if (!check()) this.waiters.add(wake);
    });
  }

  waitForType(
    type: string,
    options: { timeoutMs?: number; from?: number; where?: (frame: JsonFrame) => boolean } = {},
  ): Promise<JsonFrame> {
    return this.waitFor((frame) => frame.type === type && (options.where?.(frame) ?? true), { ...options, what: type });
  }
}

/**
 * Resolves once `socket` is open; rejects on error or close or after `timeoutMs`. A refused
 * upgrade rejects with `status` set to the HTTP status.
 */
export function waitForOpen(socket: WebSocket, timeoutMs = 5_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error("socket did not open in time"));
    }, timeoutMs);
    const onOpen = (): void => {
      cleanup();
      resolve();
    };
    const onError = (error: Error): void => {
      cleanup();
      const status = /Unexpected server response: (\d+)/.exec(error.message)?.[1];
      reject(Object.assign(error, { status: status === undefined ? undefined : Number(status) }));
    };
    const onClose = (code: number): void => {
      cleanup();
      reject(Object.assign(new Error(`socket closed (${code}) before opening`), { code }));
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      socket.off("open", onOpen);
      socket.off("error", onError);
      socket.off("close", onClose);
    };
    socket.on("open", onOpen);
    socket.on("error", onError);
    socket.on("close", onClose);
  });
}

/** Resolves with the close code once `socket` is closed (deadline `timeoutMs`). */
export function waitForClose(socket: WebSocket, timeoutMs = 5_000): Promise<{ code: number; reason: string }> {
  return new Promise((resolve, reject) => {
    if (socket.readyState === socket.CLOSED) {
      resolve({ code: -1, reason: "already closed" });
      return;
    }
    const timer = setTimeout(() => reject(new Error("socket did not close in time")), timeoutMs);
    socket.once("close", (code, reason) => {
      clearTimeout(timer);
      resolve({ code, reason: reason.toString() });
    });
  });
}
