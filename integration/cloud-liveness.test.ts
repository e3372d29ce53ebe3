/**
 * Cloud liveness without assumptions, against the reference relay (in this process) and the REAL
 * Letta Code listener (a process): a relay that never answers an SDK's JSON ping does not make an
 * idle session reconnect — protocol-level pongs are liveness — and an environment whose listener
 * is offline is NOT_FOUND at once, not a REQUEST_TIMEOUT after 30 s.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSession,
  type ConnectionStateChangeEvent,
  type SessionOptions,
  type ToolrelayError,
} from "../packages/toolrelay/src/index.js";
import { startRelay, type Relay } from "../packages/relay/src/index.js";
import { startScriptedModelServer, type ScriptedModelServer } from "../test/support/scripted-model-server.js";
import { startLettaListener, type LettaListener } from "./support/letta-listener-process.js";
import { letTimePass } from "../test/support/wait.js";

const API_KEY = "liveness-suite-key";
const PING_INTERVAL_MS = 200;
const ENV_NAME = "toolrelay-liveness";

describe("cloud liveness: a relay that answers no JSON ping", () => {
  let model: ScriptedModelServer;
  let relay: Relay;
  let listener: LettaListener;

  beforeAll(async () => {
    model = await startScriptedModelServer();
    relay = await startRelay({ apiKeys: [API_KEY], respondToJsonPings: false });
    listener = await startLettaListener({ relayUrl: relay.httpUrl, envName: ENV_NAME, modelUrl: model.url, apiKey: API_KEY });
  }, 60_000);
  afterAll(async () => {
    await listener?.stop();
    await relay?.close();
    await model?.close();
  });

  function options(extra: Partial<SessionOptions> = {}): SessionOptions {
    return {
      backend: {
        kind: "cloud",
        apiKey: API_KEY,
        baseUrl: relay.httpUrl,
        environment: { name: ENV_NAME },
        pingIntervalMs: PING_INTERVAL_MS,
        pongTimeoutMs: 2 * PING_INTERVAL_MS,
        backoff: { initialDelayMs: 20, maxDelayMs: 200 },
      },
      agent: { create: { model: model.modelHandle, name: "toolrelay-liveness" } },
      requestTimeoutMs: 30_000,
      ...extra,
    };
  }

  it("an idle session stays connected for 12 ping intervals (protocol pongs are liveness), and a turn still runs", async () => {
    const session = await createSession(options());
    try {
      const changes: ConnectionStateChangeEvent[] = [];
      const errors: ToolrelayError[] = [];
      session.on("connection-state-change", (change) => changes.push(change));
      session.on("error", (error) => errors.push(error));
      const environment = relay.environments().find((candidate) => candidate.connectionName === ENV_NAME)!;
      const attachedBefore = relay.environment(environment.connectionId)!.sdkSessions;

      await letTimePass(12 * PING_INTERVAL_MS); // on purpose: many heartbeats go by, with no drop

      // With JSON pongs as the only evidence this link dropped after pingInterval + pongTimeout (600 ms).
      expect(changes).toEqual([]);
      expect(errors.map((error) => error.message)).toEqual([]);
      expect(session.state).toBe("open");
      expect(relay.environment(environment.connectionId)!.sdkSessions).toBe(attachedBefore);
      const result = await session.send("hello").result;
      expect(result).toMatchObject({ stopReason: "end_turn", text: "pong" });
    } finally {
      await session.close();
    }
  }, 60_000);

  it("an environment whose listener went offline is NOT_FOUND at once (not REQUEST_TIMEOUT after 30 s)", async () => {
    await listener.stop();
    const started = Date.now();
    await expect(createSession(options())).rejects.toMatchObject({ code: "NOT_FOUND", message: expect.stringContaining("not connected") });
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 30_000);
});
