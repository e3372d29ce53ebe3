/**
 * The managed-sandbox stack for the sandbox suites: the directive model and the reference relay,
 * each its own process on loopback, the relay configured to provision sandboxes — every sandbox a
 * REAL Letta Code listener (letta-code 0.32.18, local backend) that the relay starts in its own
 * directory and namespaces. The SDK runs in the test process.
 */
import { realpathSync } from "node:fs";
import { join } from "node:path";
import type { RelaySandboxInfo } from "../../packages/relay/src/index.js";
import type { SessionOptions } from "../../packages/toolrelay/src/index.js";
import { LETTA_BASE_ENV, LETTA_CLI, LETTA_NODE_BINARY, LETTA_PEER_DIR, assertPeerInstalled } from "../../test/support/peer-process.js";
import { startTsxProcess, type TsxProcess } from "./tsx-process.js";

export const SANDBOX_RELAY_KEY = "sandbox-suite-key";
/** An environment variable of the test process and the relay that no sandbox may see. */
export const CALLER_ENV_CANARY = "TOOLRELAY_CALLER_CANARY";

/** One chat request as the model process logged it. */
export interface ModelRequestLine {
  index: number;
  lastUserText: string;
  /** Every user message of the request (the conversation so far), without system reminders, each cut at 500 characters. */
  userTexts: string[];
  assistantToolCalls: Array<{ id: string; name: string }>;
  toolResults: Array<{ toolCallId: string; text: string }>;
}

export interface SandboxStack {
  relayUrl: string;
  modelHandle: string;
  /** The relay's TTL minute, in ms. */
  minuteMs: number;
  /** The tenant's live sandboxes with their listeners' last output lines (`/_relay/sandboxes`). */
  sandboxes(): Promise<Array<RelaySandboxInfo & { output: string[] }>>;
  /** The tenant's environments as `GET /v1/environments` lists them. */
  environments(): Promise<Array<{ connectionId: string | null; deviceId: string; connectionName: string }>>;
  /** POST a relay test hook (`close-listener`, `drop-sdk-sockets`). */
  hook(name: "close-listener" | "drop-sdk-sockets", body: Record<string, unknown>): Promise<unknown>;
  /** Every chat request the model got so far. */
  modelRequests(): ModelRequestLine[];
  relayOutput(): string;
  stop(): Promise<void>;
}

export async function startSandboxStack(options: { minuteMs?: number; callerCanary?: string } = {}): Promise<SandboxStack> {
  assertPeerInstalled();
  const started: TsxProcess[] = [];
  const minuteMs = options.minuteMs ?? 60_000;
  try {
    const model = startTsxProcess("integration/support/directive-model-main.ts", [], { DIRECTIVE_MODEL_LOG_REQUESTS: "1" });
    started.push(model);
    const [, modelUrl, modelHandle] = await model.waitForLine(/^Model listening on (\S+) handle (\S+)$/);
    const peerModules = realpathSync(join(LETTA_PEER_DIR, "node_modules"));
    const sandboxEnv = { ...LETTA_BASE_ENV, PATH: "/usr/bin:/bin", LLAMA_CPP_BASE_URL: modelUrl! };
    const relay = startTsxProcess(
      "packages/relay/src/bin.ts",
      [
        "--port",
        "0",
        "--api-key",
        SANDBOX_RELAY_KEY,
        "--enable-test-hooks",
        "--verbose",
        "--sandbox-command",
        realpathSync(LETTA_NODE_BINARY),
        `--sandbox-arg=${realpathSync(LETTA_CLI)}`,
        "--sandbox-arg=server",
        "--sandbox-arg=--debug",
        "--sandbox-read-only",
        peerModules,
        "--sandbox-shared-state-env",
        "LETTA_LOCAL_BACKEND_DIR",
        "--sandbox-minute-ms",
        String(minuteMs),
        ...Object.entries(sandboxEnv).flatMap(([name, value]) => ["--sandbox-env", `${name}=${value}`]),
      ],
      options.callerCanary ? { [CALLER_ENV_CANARY]: options.callerCanary } : {},
    );
    started.push(relay);
    const [, relayUrl] = await relay.waitForLine(/^Relay listening on (\S+)$/);
    const headers = { authorization: `Bearer ${SANDBOX_RELAY_KEY}`, "content-type": "application/json" };
    const get = async <T>(path: string): Promise<T> => {
      const response = await fetch(`${relayUrl}${path}`, { headers });
      if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status} ${await response.text()}`);
      return (await response.json()) as T;
    };
    return {
      relayUrl: relayUrl!,
      modelHandle: modelHandle!,
      minuteMs,
      sandboxes: () => get("/_relay/sandboxes"),
      environments: async () =>
        (await get<{ connections: Array<{ connectionId: string | null; deviceId: string; connectionName: string }> }>("/v1/environments"))
          .connections,
      async hook(name, body) {
        const response = await fetch(`${relayUrl}/_relay/${name}`, { method: "POST", headers, body: JSON.stringify(body) });
        if (!response.ok) throw new Error(`relay hook ${name}: HTTP ${response.status} ${await response.text()}`);
        return response.json();
      },
      modelRequests: () =>
        model.lines
          .filter((line) => line.startsWith("MODEL-REQUEST "))
          .map((line) => JSON.parse(line.slice("MODEL-REQUEST ".length)) as ModelRequestLine),
      relayOutput: () => relay.output(),
      async stop() {
        for (const part of started.splice(0).reverse()) await part.stop();
      },
    };
  } catch (error) {
    for (const part of started.splice(0).reverse()) await part.stop().catch(() => undefined);
    throw error;
  }
}

/**
 * Options of a session on a managed sandbox of `stack`. The sandbox's TTL is refreshed well
 * inside the relay's TTL minute (its default would be 0.8 × 5 real minutes).
 */
export function sandboxSessionOptions(
  stack: SandboxStack,
  extra: Partial<SessionOptions> & { sandbox?: NonNullable<Extract<SessionOptions["backend"], { kind: "cloud" }>["sandbox"]> } = {},
): SessionOptions {
  const { sandbox, ...rest } = extra;
  return {
    backend: {
      kind: "cloud",
      apiKey: SANDBOX_RELAY_KEY,
      baseUrl: stack.relayUrl,
      sandbox: { readyTimeoutMs: 60_000, readyPollIntervalMs: 200, refreshIntervalMs: Math.floor(stack.minuteMs * 5 * 0.4), ...sandbox },
      pingIntervalMs: 2_000,
      pongTimeoutMs: 4_000,
      backoff: { initialDelayMs: 20, maxDelayMs: 500 },
    },
    agent: { create: { model: stack.modelHandle, name: "toolrelay-sandbox" } },
    conversation: "new",
    reconnectGraceMs: 15_000,
    requestTimeoutMs: 30_000,
    turnStallProbeMs: 2_000,
    ...rest,
  };
}

export const call = (tool: string, args: Record<string, unknown>) => `CALL ${tool} ${JSON.stringify(args)}`;
