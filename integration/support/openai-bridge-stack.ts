/**
 * The stack every OpenAI bridge integration test runs against: a scripted model, the REAL Letta
 * Code app-server on it (a process), and a bridge on that app-server whose agent uses the model.
 * One per test file; `stop()` ends all three.
 */
import OpenAI from "openai";
import { startOpenAiBridge, type OpenAiBridge, type OpenAiBridgeOptions } from "../../packages/toolrelay/src/openai/index.js";
import { startLettaAppServer, type LettaAppServer } from "../../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ModelScript, type ScriptedModelServer } from "../../test/support/scripted-model-server.js";

export interface BridgeStack {
  model: ScriptedModelServer;
  server: LettaAppServer;
  bridge: OpenAiBridge;
  /** An `openai` client of the bridge with `apiKey` (no retries: a failure is seen as it is). */
  client(apiKey?: string): OpenAI;
  stop(): Promise<void>;
}

/** `agentName` names the `{ create }` agent; `options` are more bridge options. */
export async function startBridgeStack(
  script: ModelScript,
  agentName: string,
  options: Partial<OpenAiBridgeOptions> = {},
): Promise<BridgeStack> {
  const model = await startScriptedModelServer({ script });
  const server = await startLettaAppServer({ modelUrl: model.url });
  const bridge = await startOpenAiBridge({
    backend: { kind: "local", url: server.url },
    agent: { create: { model: model.modelHandle, name: agentName } },
    ...options,
  });
  return {
    model,
    server,
    bridge,
    client: (apiKey = "unused") => new OpenAI({ apiKey, baseURL: bridge.url, maxRetries: 0 }),
    async stop() {
      await bridge.close();
      await server.stop();
      await model.close();
    },
  };
}
