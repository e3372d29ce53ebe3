/**
 * Where the soak's conversations run: the real Letta Code app-server (local backend), or the cloud
 * path — the reference relay in this process and the real Letta Code listener behind it. Both use
 * one scripted model server playing the {@link SoakModel}. The same seeds run on either.
 */
import { type ClientTool, createSession, type Session } from "../../packages/toolrelay/src/index.js";
import { startRelay, type Relay } from "../../packages/relay/src/index.js";
import { createSessionOnLink } from "../../packages/toolrelay/src/session/create-session.js";
import { startLettaListener, type LettaListener } from "../../integration/support/letta-listener-process.js";
import { startLettaAppServer, type LettaAppServer } from "../support/letta-peer-process.js";
import { startScriptedModelServer, type ScriptedModelServer } from "../support/scripted-model-server.js";
import { SoakModel } from "./soak-model.js";

export type SoakBackendKind = "local" | "cloud";

export interface SoakBackend {
  kind: SoakBackendKind;
  model: SoakModel;
  /** A session for one conversation, with these tools. */
  open(tools: readonly ClientTool[]): Promise<Session>;
  stop(): Promise<void>;
}

const API_KEY = "soak-conversations-key";

export async function startSoakBackend(kind: SoakBackendKind): Promise<SoakBackend> {
  const model = new SoakModel();
  const stops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const part of stops.splice(0).reverse()) await part().catch(() => undefined);
  };
  try {
    const server: ScriptedModelServer = await startScriptedModelServer({ script: model.script });
    stops.push(() => server.close());
    if (kind === "local") {
      const peer: LettaAppServer = await startLettaAppServer({ modelUrl: server.url });
      stops.push(() => peer.stop());
      return {
        kind,
        model,
        open: (tools) =>
          createSessionOnLink({
            backend: { kind: "local", url: peer.url },
            agent: { create: { model: server.modelHandle, name: "toolrelay-soak" } },
            tools: [...tools],
          }),
        stop,
      };
    }
    const relay: Relay = await startRelay({ apiKeys: [API_KEY] });
    stops.push(() => relay.close());
    const envName = `soak-${process.pid}`;
    const listener: LettaListener = await startLettaListener({ relayUrl: relay.httpUrl, envName, modelUrl: server.url, apiKey: API_KEY });
    stops.push(() => listener.stop());
    return {
      kind,
      model,
      open: (tools) =>
        createSession({
          backend: { kind: "cloud", apiKey: API_KEY, baseUrl: relay.httpUrl, environment: { name: envName } },
          agent: { create: { model: server.modelHandle, name: envName } },
          conversation: "new",
          tools: [...tools],
        }),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
