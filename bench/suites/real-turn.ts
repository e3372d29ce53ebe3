/**
 * Benchmark 6: inside a real turn. The REAL Letta Code app-server
 * (`letta server --listen`, test/support/letta-peer-process.ts) with the
 * scripted OpenAI-compatible model (test/support/scripted-model-server.ts),
 * each in its own process; the model answers every user message with K calls
 * of the client tool `noop` (the app-server runs them one after another), then
 * with a text once the results come back. Measured: the time the SDK spends
 * per call between the request reaching the socket's `message` listeners and
 * the response being handed to `send()` (bench/harness/timed-web-socket.ts),
 * beside the whole turn (`session.send()` until `turn.result` resolves) — in
 * `mode: "unrestricted"`, as before issue 26. Then the same turns of a second
 * session in the default mode (strict), where the app-server asks
 * `can_use_tool` before each call: a call's time from that question to its
 * response.
 */
import type { Session, SessionOptions } from "../../packages/toolrelay/src/index.js";
import { startLettaAppServer, type LettaAppServer } from "../../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ScriptedModelServer } from "../../test/support/scripted-model-server.js";
import { noopTool, withDeadline } from "../harness/clients.js";
import type { Log, ResultRow, SuiteResult } from "../harness/report-types.js";
import { createSession } from "../harness/sdk.js";
import { formatMicros, formatMillis, ratio, summarize, type Summary } from "../harness/stats.js";
import { timedWebSocketClass } from "../harness/timed-web-socket.js";

export interface RealTurnConfig {
  warmupTurns: number;
  turns: number;
  /** Tool calls the model makes per turn (one reply with K calls). */
  callsPerTurn: number;
  /** Deadline of one turn, ms. */
  turnTimeoutMs: number;
}

export const fullRealTurnConfig: RealTurnConfig = { warmupTurns: 3, turns: 30, callsPerTurn: 5, turnTimeoutMs: 30_000 };
export const quickRealTurnConfig: RealTurnConfig = { warmupTurns: 0, turns: 1, callsPerTurn: 2, turnTimeoutMs: 30_000 };

/** What one session's turns measured. */
interface TurnsMeasured {
  calls: Summary;
  turns: Summary;
  events: Summary;
  approvals: Summary;
  toolResults: Summary;
}

/**
 * `config.warmupTurns + config.turns` turns of one session (`mode` as given: undefined is the
 * session's default), timed after the warm-up. The session is closed before this returns.
 */
async function measureTurns(
  server: LettaAppServer,
  model: ScriptedModelServer,
  config: RealTurnConfig,
  mode: SessionOptions["mode"],
  name: string,
): Promise<TurnsMeasured> {
  const timed = timedWebSocketClass({ approvals: mode === undefined });
  const session: Session = await createSession({
    backend: { kind: "local", url: server.url, WebSocket: timed.WebSocket },
    agent: { create: { model: model.modelHandle, name } },
    tools: [noopTool],
    ...(mode === undefined ? {} : { mode }),
  });
  try {
    const eventMicros: number[] = [];
    const startedAt = new Map<string, number>();
    session.on("tool-call-start", (event) => startedAt.set(event.toolCallId, performance.now()));
    session.on("tool-call-end", (event) => {
      const at = startedAt.get(event.toolCallId);
      if (at !== undefined) eventMicros.push((performance.now() - at) * 1000);
      startedAt.delete(event.toolCallId);
    });
    const turnMillis: number[] = [];
    const toolResults: number[] = [];
    for (let index = 0; index < config.warmupTurns + config.turns; index++) {
      if (index === config.warmupTurns) {
        timed.recorder.reset();
        eventMicros.length = 0;
      }
      const turnStarted = performance.now();
      const result = await withDeadline(session.send(`turn ${index}`).result, config.turnTimeoutMs, "a real turn");
      const millis = performance.now() - turnStarted;
      if (index >= config.warmupTurns) {
        turnMillis.push(millis);
        toolResults.push(result.events.filter((event) => event.type === "tool-result").length);
      }
      model.clearRequests();
    }
    return {
      calls: summarize(timed.recorder.samples),
      turns: summarize(turnMillis),
      events: summarize(eventMicros),
      approvals: summarize(timed.approvalSamples),
      toolResults: summarize(toolResults),
    };
  } finally {
    await session.close();
  }
}

export async function runRealTurn(config: RealTurnConfig, log: Log): Promise<SuiteResult> {
  const started = performance.now();
  let model: ScriptedModelServer | undefined;
  let server: LettaAppServer | undefined;
  try {
    model = await startScriptedModelServer();
    server = await startLettaAppServer({ modelUrl: model.url });
    model.setScript((request) => {
      if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults.length} results` };
      return { toolCalls: Array.from({ length: config.callsPerTurn }, () => ({ name: "noop", arguments: {} })) };
    });
    // The SDK's own handling of a call, as measured at the baseline (a04a574), when a session
    // sent no mode and the runtime ran unrestricted: no can_use_tool before a call.
    const unasked = await measureTurns(server, model, config, "unrestricted", "toolrelay-bench");
    // The default mode (strict since issue 26): the runtime asks can_use_tool before every
    // client tool call and the SDK allows its own tools; the approval round trip is in the turn.
    const asked = await measureTurns(server, model, config, undefined, "toolrelay-bench-default-mode");
    const { calls, turns, events } = unasked;
    const expected = config.turns * config.callsPerTurn;
    if (calls.count !== expected) log(`real turn: expected ${expected} timed calls, got ${calls.count}`);
    if (asked.approvals.count !== expected) log(`real turn: expected ${expected} asked calls, got ${asked.approvals.count}`);
    log(`real turn: ${config.turns} turns × ${config.callsPerTurn} calls done, unrestricted and in the default mode`);
    const rows: ResultRow[] = [
      {
        section: "6. Real turn",
        measure: "SDK time per call p50 (request in → response to send())",
        baselineName: "whole turn p50",
        baselineValue: formatMillis(turns.p50),
        candidateName: "toolrelay",
        candidateValue: formatMicros(calls.p50),
        ratio: ratio(calls.p50 / 1000, turns.p50),
        goal: { text: "≤ 0.5 ms p50 (absolute)", met: calls.p50 <= 500 },
        note: `${calls.count} calls in ${turns.count} turns of ${config.callsPerTurn} calls; ratio = share of the turn`,
      },
      {
        section: "6. Real turn",
        measure: "SDK time per call p99",
        baselineName: "whole turn p99",
        baselineValue: formatMillis(turns.p99),
        candidateName: "toolrelay",
        candidateValue: formatMicros(calls.p99),
        ratio: ratio(calls.p99 / 1000, turns.p99),
      },
      {
        section: "6. Real turn",
        measure: `SDK time per turn (${config.callsPerTurn} calls, sum of p50s)`,
        baselineName: "whole turn p50",
        baselineValue: formatMillis(turns.p50),
        candidateName: "toolrelay",
        candidateValue: formatMicros(calls.p50 * config.callsPerTurn),
        ratio: ratio((calls.p50 * config.callsPerTurn) / 1000, turns.p50),
        note: `tool-call-start → tool-call-end events: p50 ${formatMicros(events.p50)}, p99 ${formatMicros(events.p99)}`,
      },
      {
        section: "6. Real turn",
        measure: "Default mode (strict): a call with its approval, p50 (can_use_tool in → response to send())",
        baselineName: "unrestricted: request in → response",
        baselineValue: formatMicros(calls.p50),
        candidateName: "strict",
        candidateValue: formatMicros(asked.approvals.p50),
        ratio: ratio(asked.approvals.p50, calls.p50),
        note: `p99 ${formatMicros(asked.approvals.p99)}; whole turn p50 ${formatMillis(asked.turns.p50)}, with the session's turn gap (unrestricted ${formatMillis(turns.p50)}); ${asked.approvals.count} calls`,
      },
    ];
    return {
      name: "real-turn",
      rows,
      notes: [
        `Real Letta Code app-server (test/letta-peer, \`letta server --listen\`) and the scripted model server, each its own process on loopback; ${config.turns} turns after ${config.warmupTurns} warm-up turns, each turn = the model asks for ${config.callsPerTurn} \`noop\` calls in one reply (the app-server sends the requests one after another), then answers with text.`,
        "SDK time per call: the session's WebSocket is a `ws` subclass (passed as `backend.WebSocket`) that reads `process.hrtime` when the `external_tool_call_request` is handed to its `message` listeners and when the `external_tool_call_response` with the same `request_id` is given to `send()` (bench/harness/timed-web-socket.ts): decode + validate + dispatch + the no-op tool + encode, all in the SDK. Whole turn: `session.send()` until `turn.result` resolves. The session's own `tool-call-start`/`tool-call-end` events are reported beside it as a cross-check (they cover less: from after input validation to settlement).",
        "The first three rows use `mode: \"unrestricted\"` (the runtime asks nothing), as every session did before issue 26 made `strict` the default: comparable with earlier runs. The last row is a second session (its own agent, same app-server) in the default mode: the runtime sends a `can_use_tool` `control_request` before each client tool call, the SDK allows its own tool, then the runtime sends the request; timed from the `control_request` reaching the socket to the call's response given to `send()` (the approval answer, the app-server's work until the request, the SDK's handling). The app-server asks about all of a reply's calls before it sends the first request, so a later call's time includes the earlier calls' approvals and runs. Its whole turn includes the session's gap before each input (`turnGapMs`, 750 ms by default in every mode but unrestricted: the runtime loses a permission request of a turn that follows the previous one too closely), which the unrestricted session does not wait.",
      ],
      seconds: (performance.now() - started) / 1000,
      details: {
        sdkMicrosPerCall: calls,
        turnMillis: turns,
        eventMicros: events,
        toolResultsPerTurn: unasked.toolResults,
        defaultMode: { approvalMicrosPerCall: asked.approvals, turnMillis: asked.turns, sdkMicrosPerCall: asked.calls },
      },
    };
  } finally {
    // Each step on its own: a failing one (the peer harness removing a HOME the app-server still
    // writes to) must not leave the others running.
    await server?.stop().catch((error: unknown) => log(`real turn: app-server stop failed: ${String(error)}`));
    await model?.close().catch((error: unknown) => log(`real turn: model server close failed: ${String(error)}`));
  }
}
