/**
 * Whether the session keeps the Node.js process alive. A session holds the event loop only while
 * something of it is in flight — starting, a turn, a client tool call, a request to the runtime,
 * closing — and lets go of it while idle, so that a script that forgets `close()` still exits once
 * its own work is done (docs/getting-started.md#6-close). Letting go is Node's `unref()`: the
 * session's sockets, timers and the server it spawned go on working; they only stop keeping the
 * process alive on their own. Everything the session opens goes through this object: its timers
 * ({@link EventLoopHold.wrap}), its WebSocket class ({@link EventLoopHold.webSocket}) and a spawned
 * process ({@link EventLoopHold.adopt}).
 */
import type { ChildProcess } from "node:child_process";
import type { IncomingMessage } from "node:http";
import type { TimerHandle, Timers } from "../internal/timers.js";
import type { WebSocketConstructor } from "../transport/open-web-socket.js";

/** What Node can let go of: a timer, a socket, a pipe, a child process. */
interface Unreffable {
  ref?: (() => unknown) | undefined;
  unref?: (() => unknown) | undefined;
}

function apply(handle: Unreffable, held: boolean): void {
  if (held) handle.ref?.();
  else handle.unref?.();
}

export class EventLoopHold {
  #held = true;
  /** Timers armed and not fired or cleared yet. */
  readonly #timers = new Set<TimerHandle>();
  /** Sockets, pipes and processes alive. */
  readonly #handles = new Set<Unreffable>();

  /** Whether the session holds the event loop now (it does from the start). */
  get held(): boolean {
    return this.#held;
  }

  /** Hold the event loop (`true`: something is in flight) or let it go (`false`: idle). */
  set(held: boolean): void {
    if (held === this.#held) return;
    this.#held = held;
    for (const handle of this.#timers) apply(handle as Unreffable, held);
    for (const handle of this.#handles) apply(handle, held);
  }

  /** `base`, with every timer it arms following the hold. */
  wrap(base: Timers): Timers {
    return {
      setTimeout: (callback, delayMs) => {
        const handle = base.setTimeout(() => {
          this.#timers.delete(handle);
          callback();
        }, delayMs);
        this.#timers.add(handle);
        if (!this.#held) apply(handle as Unreffable, false);
        return handle;
      },
      clearTimeout: (handle) => {
        this.#timers.delete(handle);
        base.clearTimeout(handle);
      },
      now: () => base.now(),
    };
  }

  /** A spawned process: it and its pipes follow the hold until it exits. */
  adopt(child: ChildProcess): void {
    const parts = [child, child.stdin, child.stdout, child.stderr].filter((part) => part !== null) as Unreffable[];
    for (const part of parts) this.#track(part);
    child.once("exit", () => {
      for (const part of parts) this.#handles.delete(part);
    });
  }

  /** `Base`, its sockets following the hold (the TCP socket of the upgrade's answer, until it closes). */
  webSocket(Base: WebSocketConstructor): WebSocketConstructor {
    const hold = this;
    class HeldWebSocket extends Base {
      constructor(...args: ConstructorParameters<WebSocketConstructor>) {
        super(...args);
        this.once("upgrade", (response: IncomingMessage) => {
          const socket = response.socket;
          hold.#track(socket);
          socket.once("close", () => hold.#handles.delete(socket));
        });
      }
    }
    // The subclass takes what `Base` takes; TypeScript sees only the last of ws's constructor overloads.
    return HeldWebSocket as unknown as WebSocketConstructor;
  }

  #track(handle: Unreffable): void {
    this.#handles.add(handle);
    apply(handle, this.#held);
  }
}
