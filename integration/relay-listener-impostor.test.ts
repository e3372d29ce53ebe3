/**
 * Inside one tenant, an SDK key must not pose as the tenant's listener (issue 27). The reference
 * relay (this process, real sockets on loopback) gives tenant `acme` a listener key and an SDK
 * key; the REAL Letta Code listener (a process) holds the environment with the listener key; a
 * real SDK session (cloud backend, SDK key) has a `pay` tool. The impostor holds the SDK key: it
 * lists the environments (which show the device id the listener socket checks), opens the
 * listener socket with that device id, and on the first frame that names a runtime sends an
 * `external_tool_call_request` for `pay {to:"attacker"}`.
 *
 * With the key roles the upgrade is refused (403, before any socket exists, no key in the text),
 * the real listener stays attached, and the session runs only the real listener's call. With the
 * role check removed the same test shows the attack: the impostor's socket opens, it reads the
 * user's prompt, and the SDK runs `pay {to:"attacker"}`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { z } from "zod";
import { createSession, defineTool, type Session } from "../packages/toolrelay/src/index.js";
import { startRelay, type Relay, type RelayRefusal } from "../packages/relay/src/index.js";
import { startLettaListener, type LettaListener } from "./support/letta-listener-process.js";
import { startTsxProcess, type TsxProcess } from "./support/tsx-process.js";

const LISTENER_KEY = "acme-listener-key-0123456789";
const SDK_KEY = "acme-sdk-key-0123456789";
const ENV_NAME = "acme-payments";

interface ImpostorOutcome {
  /** `opened`, or the HTTP status of the refused upgrade with its body. */
  upgrade: { kind: "opened" } | { kind: "refused"; status: number; body: string };
  /** Every frame the impostor read (a prompt, for one). */
  framesRead: Array<Record<string, unknown>>;
  /** How many tool call requests it sent. */
  callsSent: number;
}

/** Opens the listener socket with the SDK key and the listed device id; sends `pay` for the first runtime it sees. */
function impostor(
  relayUrl: string,
  connectionId: string,
  deviceId: string,
): { outcome: ImpostorOutcome; opened: Promise<void>; close(): void } {
  const outcome: ImpostorOutcome = { upgrade: { kind: "opened" }, framesRead: [], callsSent: 0 };
  const url = `${relayUrl.replace(/^http/, "ws")}/v1/environments/${encodeURIComponent(connectionId)}/listener/ws?deviceId=${encodeURIComponent(deviceId)}&connectionName=${ENV_NAME}`;
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${SDK_KEY}` } });
  const opened = new Promise<void>((resolve) => {
    socket.once("open", () => resolve());
    socket.once("unexpected-response", (_request, response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        outcome.upgrade = { kind: "refused", status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() };
        resolve();
      });
    });
    socket.once("error", () => resolve());
  });
  socket.on("message", (data) => {
    const frame = JSON.parse(String(data)) as Record<string, unknown>;
    outcome.framesRead.push(frame);
    const runtime = (frame.runtime ?? {}) as { agent_id?: string; conversation_id?: string };
    if (outcome.callsSent > 0 || typeof runtime.conversation_id !== "string") return;
    outcome.callsSent++;
    socket.send(
      JSON.stringify({
        type: "external_tool_call_request",
        request_id: "external-tool-impostor-1",
        runtime: { agent_id: runtime.agent_id ?? null, conversation_id: runtime.conversation_id },
        tool_call_id: "call-impostor-1",
        tool_name: "pay",
        input: { to: "attacker", amount: 1_000 },
      }),
    );
  });
  return { outcome, opened, close: () => socket.terminate() };
}

describe("an SDK key posing as the tenant's listener (real listener, real SDK session)", () => {
  let model: TsxProcess;
  let relay: Relay;
  let listener: LettaListener;
  let modelHandle: string;
  const refusals: RelayRefusal[] = [];
  const logLines: string[] = [];

  beforeAll(async () => {
    model = startTsxProcess("integration/support/directive-model-main.ts");
    const [, modelUrl, handle] = await model.waitForLine(/^Model listening on (\S+) handle (\S+)$/);
    modelHandle = handle!;
    const log = (message: string, details?: Record<string, unknown>) => logLines.push(`${message} ${JSON.stringify(details ?? {})}`);
    relay = await startRelay({
      tenants: { acme: { listener: [LISTENER_KEY], sdk: [SDK_KEY] } },
      logger: { debug: log, info: log, warn: log },
    });
    relay.on("refused", (refusal) => refusals.push(refusal));
    listener = await startLettaListener({ relayUrl: relay.httpUrl, envName: ENV_NAME, modelUrl: modelUrl!, apiKey: LISTENER_KEY });
  }, 90_000);

  afterAll(async () => {
    await listener?.stop();
    await relay?.close();
    await model?.stop();
  });

  it("the impostor's upgrade is refused with 403, the real listener stays attached, and the SDK runs only the real listener's pay", async () => {
    const payments: Array<{ to: string; amount: number }> = [];
    const pay = defineTool({
      name: "pay",
      description: "Pays an amount to someone.",
      inputSchema: z.object({ to: z.string(), amount: z.number() }),
      execute: (input) => {
        payments.push(input);
        return `paid ${input.amount} to ${input.to}`;
      },
    });
    let session: Session | undefined;
    const attack = await (async () => {
      session = await createSession({
        backend: { kind: "cloud", apiKey: SDK_KEY, baseUrl: relay.httpUrl, environment: { name: ENV_NAME } },
        agent: { create: { model: modelHandle, name: "acme-payments-agent" } },
        conversation: "new",
        tools: [pay],
        requestTimeoutMs: 30_000,
      });
      // What the impostor sees: GET /v1/environments with the SDK key shows the device id.
      const listed = (await (
        await fetch(`${relay.httpUrl}/v1/environments`, { headers: { authorization: `Bearer ${SDK_KEY}` } })
      ).json()) as {
        connections: Array<{ connectionId: string; deviceId: string; connectionName: string }>;
      };
      const environment = listed.connections.find((connection) => connection.connectionName === ENV_NAME);
      expect(environment?.deviceId).toEqual(expect.any(String));
      const attempt = impostor(relay.httpUrl, environment!.connectionId, environment!.deviceId);
      await attempt.opened;
      // The user's next turn: its prompt goes to whoever holds the listener socket.
      const turn = session.send('CALL pay {"to":"alice","amount":5}');
      const result = await Promise.race([
        turn.result.then((settled) => ({ text: settled.text })),
        new Promise<{ text: string }>((resolve) => setTimeout(() => resolve({ text: "(the turn did not settle in 30 s)" }), 30_000)),
      ]);
      attempt.close();
      return { outcome: attempt.outcome, result, connectionId: environment!.connectionId };
    })().finally(() => session?.close());

    console.info(
      `[impostor] upgrade ${JSON.stringify(attack.outcome.upgrade)}; frames read ${JSON.stringify(attack.outcome.framesRead.map((frame) => frame.type))}; calls sent ${attack.outcome.callsSent}; payments ${JSON.stringify(payments)}`,
    );
    expect(attack.outcome.upgrade).toEqual({
      kind: "refused",
      status: 403,
      body: expect.stringContaining(
        "this API key has no listener role: only a listener key may register environments or open listener sockets",
      ),
    });
    expect(attack.outcome.framesRead).toEqual([]);
    expect(attack.outcome.callsSent).toBe(0);
    // Only the real listener's call ran; the turn ended with its result.
    expect(payments).toEqual([{ to: "alice", amount: 5 }]);
    expect(attack.result.text).toContain("paid 5 to alice");
    // The real listener was never pushed off: still attached, connected once.
    expect(relay.environments().find((environment) => environment.connectionId === attack.connectionId)?.listenerConnected).toBe(true);
    expect(listener.output().match(/Connected\. Awaiting instructions\./g)).toHaveLength(1);
    expect(refusals).toContainEqual({
      kind: "key-role",
      tenant: "acme",
      connectionId: attack.connectionId,
      reason: "this API key has no listener role: only a listener key may register environments or open listener sockets",
    });
    // No refusal text or log line carries a key.
    const everything = [JSON.stringify(attack.outcome), JSON.stringify(refusals), logLines.join("\n")].join("\n");
    expect(everything).not.toContain(SDK_KEY);
    expect(everything).not.toContain(LISTENER_KEY);
  }, 90_000);
});
