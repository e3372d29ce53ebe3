/**
 * The cloud path with a breakable SDK side: the scripted model and the reference relay in this
 * process, the REAL Letta Code listener as a process (connected to the relay directly), and a
 * TCP proxy between the SDK and the relay that can kill one direction of the SDK's connections
 * (test/transport/half-open-proxy.ts). What the listener received is read from its `--debug`
 * output, so a test can count the `input` frames that reached the runtime.
 */
import type { SessionOptions } from "../../packages/toolrelay/src/index.js";
import { startRelay, type Relay, type RelayOptions } from "../../packages/relay/src/index.js";
import { startScriptedModelServer, type ModelScript, type ScriptedModelServer } from "../../test/support/scripted-model-server.js";
import { startHalfOpenProxy, type HalfOpenProxy } from "../../test/transport/half-open-proxy.js";
import { startLettaListener, type LettaListener } from "./letta-listener-process.js";

export interface CloudFaultStack {
  model: ScriptedModelServer;
  relay: Relay;
  listener: LettaListener;
  /** Between the SDK and the relay (the listener does not pass through it). */
  proxy: HalfOpenProxy;
  /** Cloud session options through the proxy, with `backend` fields merged over the defaults here. */
  sessionOptions(backend: Record<string, unknown>, extra: Partial<SessionOptions>): SessionOptions;
  /** How many `input` frames carrying `text` the listener printed as received. */
  inputsReceived(text: string): number;
  stop(): Promise<void>;
}

export async function startCloudFaultStack(options: {
  envName: string;
  apiKey: string;
  relay?: Partial<RelayOptions>;
  script?: ModelScript;
}): Promise<CloudFaultStack> {
  const stops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const part of stops.splice(0).reverse()) await part().catch(() => undefined);
  };
  try {
    const model = await startScriptedModelServer({ script: options.script });
    stops.push(() => model.close());
    const relay = await startRelay({ apiKeys: [options.apiKey], ...options.relay });
    stops.push(() => relay.close());
    const listener = await startLettaListener({
      relayUrl: relay.httpUrl,
      envName: options.envName,
      modelUrl: model.url,
      apiKey: options.apiKey,
    });
    stops.push(() => listener.stop());
    const proxy = await startHalfOpenProxy({ host: "127.0.0.1", port: Number(new URL(relay.httpUrl).port) });
    stops.push(() => proxy.close());
    return {
      model,
      relay,
      listener,
      proxy,
      sessionOptions: (backend, extra) => ({
        backend: {
          kind: "cloud",
          apiKey: options.apiKey,
          baseUrl: `http://127.0.0.1:${proxy.port}`,
          environment: { name: options.envName },
          ...backend,
        },
        agent: { create: { model: model.modelHandle, name: options.envName } },
        conversation: "new",
        ...extra,
      }),
      inputsReceived: (text) =>
        listener.stdoutLines.filter((line) => line.includes("recv") && line.includes('"type":"input"') && line.includes(text)).length,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
