/**
 * Writes of one tick leave together. Each `ws` `send()` is otherwise its own `writev` system call,
 * and under load (many calls in flight, several requests in one TCP chunk, all answered in the same
 * tick) those syscalls, not the SDK's JavaScript, were most of the client's time
 * (docs/performance.md). So the first write of a tick goes out at once (a lone answer is not
 * delayed by the bookkeeping that follows it), and the writes after it in the same tick are held —
 * the socket's TCP stream is corked — until the tick's `process.nextTick` queue runs, when they
 * leave in one `writev`, in order. A socket without a corkable `_socket` (not `ws`) is left alone.
 */
import type WebSocket from "ws";

interface Corkable {
  cork(): void;
  uncork(): void;
}

const batches = new WeakMap<WebSocket, TickWriteBatch>();

/** Call right before every write on `socket` (its batch is made on first use). */
export function beforeWrite(socket: WebSocket): void {
  let batch = batches.get(socket);
  if (batch === undefined) {
    batch = new TickWriteBatch(socket);
    batches.set(socket, batch);
  }
  batch.beforeWrite();
}

export class TickWriteBatch {
  #stream: Corkable | undefined;
  #state: "idle" | "wrote" | "held" = "idle";

  constructor(socket: WebSocket) {
    const stream = (socket as unknown as { _socket?: Partial<Corkable> | undefined })._socket;
    if (typeof stream?.cork === "function" && typeof stream.uncork === "function") this.#stream = stream as Corkable;
  }

  /** A write is about to be made: the tick's first goes out at once, the others are held for the tick. */
  beforeWrite(): void {
    if (this.#stream === undefined || this.#state === "held") return;
    if (this.#state === "idle") {
      this.#state = "wrote";
      process.nextTick(this.#endTick);
      return;
    }
    this.#state = "held";
    this.#stream.cork();
  }

  #endTick = (): void => {
    if (this.#state === "held") this.#stream!.uncork();
    this.#state = "idle";
  };
}
