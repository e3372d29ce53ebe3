/**
 * The live relay stack for the cloud backend suite: the scripted model, the
 * reference relay and the REAL Letta Code listener, each its own process on
 * loopback. The SDK runs in the test process.
 */
import { startLettaListener, type LettaListener } from "./letta-listener-process.js";
import { startTsxProcess, type TsxProcess } from "./tsx-process.js";

export const RELAY_API_KEY = "live-relay-suite-key";

export interface CloudStack {
  /** The relay's HTTP origin (the SDK's cloud `baseUrl`). */
  relayUrl: string;
  modelHandle: string;
  envName: string;
  listener: LettaListener;
  /** What the relay printed (its logs go to stderr; never frame contents or keys). */
  relayOutput(): string;
  /** POST a relay test hook (`close-listener`, `drop-sdk-sockets`). */
  hook(name: "close-listener" | "drop-sdk-sockets", body: Record<string, unknown>): Promise<unknown>;
  /** The environment's current connection id. */
  /** The environment's connection id; rejects while it is not registered or its listener is offline. */
  connectionId(): Promise<string>;
  stop(): Promise<void>;
}

export async function startCloudStack(options: {
  listenerMode: "paired" | "single";
  envName: string;
  relayArgs?: string[];
}): Promise<CloudStack> {
  const started: Array<{ stop(): Promise<void> }> = [];
  try {
    const model: TsxProcess = startTsxProcess("integration/support/directive-model-main.ts");
    started.push(model);
    const [, modelUrl, modelHandle] = await model.waitForLine(/^Model listening on (\S+) handle (\S+)$/);
    const relay = startTsxProcess("packages/relay/src/bin.ts", [
      "--port",
      "0",
      "--api-key",
      RELAY_API_KEY,
      "--listener-mode",
      options.listenerMode,
      "--enable-test-hooks",
      ...(options.relayArgs ?? []),
    ]);
    started.push(relay);
    const [, relayUrl] = await relay.waitForLine(/^Relay listening on (\S+)$/);
    const listener = await startLettaListener({
      relayUrl: relayUrl!,
      envName: options.envName,
      modelUrl: modelUrl!,
      apiKey: RELAY_API_KEY,
    });
    started.push(listener);
    const authorization = { authorization: `Bearer ${RELAY_API_KEY}`, "content-type": "application/json" };
    const stack: CloudStack = {
      relayUrl: relayUrl!,
      modelHandle: modelHandle!,
      envName: options.envName,
      listener,
      relayOutput: () => relay.output(),
      async hook(name, body) {
        const response = await fetch(`${relayUrl}/_relay/${name}`, { method: "POST", headers: authorization, body: JSON.stringify(body) });
        if (!response.ok) throw new Error(`relay hook ${name}: HTTP ${response.status} ${await response.text()}`);
        return response.json();
      },
      async connectionId() {
        const response = await fetch(`${relayUrl}/v1/environments`, { headers: authorization });
        const body = (await response.json()) as { connections: Array<{ connectionId: string | null; connectionName: string }> };
        const match = body.connections.find((connection) => connection.connectionName === options.envName);
        if (!match) throw new Error(`environment ${options.envName} is not registered`);
        if (match.connectionId === null) throw new Error(`environment ${options.envName} is registered but its listener is offline`);
        return match.connectionId;
      },
      async stop() {
        for (const part of started.splice(0).reverse()) await part.stop();
      },
    };
    return stack;
  } catch (error) {
    for (const part of started.splice(0).reverse()) await part.stop().catch(() => undefined);
    throw error;
  }
}
