/**
 * Writes made while one inbound chunk is handled go out together. `ws` hands every frame of a TCP
 * chunk to its `message` listeners in one synchronous loop, and each `send()` is otherwise its own
 * `writev` system call: under load (many calls in flight, several requests per chunk) the syscalls,
 * not the SDK's JavaScript, were most of the client's time (docs/performance.md). `hold()` corks the
 * socket's TCP stream until the current tick's `process.nextTick` queue runs, so the answers written
 * in that tick leave in one `writev`, in order. An answer written later (an async tool) is written
 * at once, as before. A socket class without a corkable `_socket` (not `ws`) is left alone.
 */
import type WebSocket from "ws";

interface Corkable {
  cork(): void;
  uncork(): void;
}

export class TickWriteBatch {
  #stream: Corkable | undefined;
  #held = false;

  constructor(socket: WebSocket) {
    const stream = (socket as unknown as { _socket?: Partial<Corkable> })._socket;
    if (typeof stream?.cork === "function" && typeof stream.uncork === "function") this.#stream = stream as Corkable;
  }

  /** Hold this tick's writes (call before handling an inbound message). */
  hold(): void {
    if (this.#held || this.#stream === undefined) return;
    this.#held = true;
    this.#stream.cork();
    process.nextTick(this.#release);
  }

  #release = (): void => {
    this.#held = false;
    this.#stream!.uncork();
  };
}
