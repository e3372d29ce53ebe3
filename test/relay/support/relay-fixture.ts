/**
 * Per-test relay fixture: starts a relay on 127.0.0.1:0 and tracks every client the test
 * opens, so one `cleanup()` in `afterEach` closes them all.
 */
import { startRelay, type Relay, type RelayEvents, type RelayLogger, type RelayOptions } from "../../../packages/relay/src/index.js";
import { FakeListener, type FakeListenerMode } from "./fake-listener.js";
import { until } from "../../support/wait.js";
import { RawStatusClient, type RawStatusClientOptions } from "./raw-status-client.js";

export const TEST_KEY = "relay-test-key-0123456789";

/** A logger that keeps every line (to prove none contains a secret). */
export function recordingLogger(): RelayLogger & { lines: string[] } {
  const lines: string[] = [];
  const write = (level: string) => (message: string, details?: Record<string, unknown>) => {
    lines.push(`${level} ${message} ${details ? JSON.stringify(details) : ""}`);
  };
  return { lines, debug: write("debug"), info: write("info"), warn: write("warn") };
}

export class RelayFixture {
  relay!: Relay;
  readonly #clients: RawStatusClient[] = [];
  readonly #listeners: FakeListener[] = [];
  #detachedSockets = 0;

  async start(options: RelayOptions = {}): Promise<Relay> {
    this.relay = await startRelay({ apiKeys: [TEST_KEY], heartbeatIntervalMs: 0, ...options });
    this.relay.on("sdk-detached", () => {
      this.#detachedSockets++;
    });
    return this.relay;
  }

  /** SDK sockets the relay has seen close since the start (`sdk-detached` events). */
  get detachedSockets(): number {
    return this.#detachedSockets;
  }

  /** Terminates `client` and resolves once the relay has seen both of its sockets close. */
  async terminate(client: RawStatusClient): Promise<void> {
    const before = this.#detachedSockets;
    client.terminate();
    await this.waitFor(() => this.#detachedSockets >= before + 2, "the relay to see both SDK sockets close");
  }

  async listener(options: { mode?: FakeListenerMode; deviceId?: string; apiKey?: string } = {}): Promise<FakeListener> {
    const listener = await FakeListener.start(this.relay.httpUrl, options.apiKey ?? TEST_KEY, options);
    this.#listeners.push(listener);
    await this.waitFor(() => this.relay.environment(listener.answer.connectionId)?.listenerConnected === true, "listener ready");
    return listener;
  }

  async sdk(connectionId: string, options: Partial<RawStatusClientOptions> = {}): Promise<RawStatusClient> {
    const client = await RawStatusClient.connect({ url: this.relay.url, connectionId, apiKey: TEST_KEY, ...options });
    this.#clients.push(client);
    return client;
  }

  /** Resolves on the next `event` (deadline `timeoutMs`, default 5 s). */
  nextEvent<K extends keyof RelayEvents>(event: K, timeoutMs = 5_000): Promise<RelayEvents[K]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.relay.off(event, handler as never);
        reject(new Error(`no ${event} event within ${timeoutMs} ms`));
      }, timeoutMs);
      const handler = (...args: RelayEvents[K]): void => {
        clearTimeout(timer);
        resolve(args);
      };
      this.relay.once(event, handler as never);
    });
  }

  /** Resolves once `condition` is true (`until`, test/support/wait.ts); rejects after `timeoutMs` (default 5 s). */
  async waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
    await until(condition, what, timeoutMs);
  }

  async cleanup(): Promise<void> {
    for (const client of this.#clients.splice(0)) client.terminate();
    for (const listener of this.#listeners.splice(0)) listener.terminate();
    await this.relay?.close();
  }
}

export { letTimePass } from "../../support/wait.js";
