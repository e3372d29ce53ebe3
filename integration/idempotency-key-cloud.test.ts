/**
 * `ctx.idempotencyKey` on the CLOUD path: SDK sessions (this process) ⇄ the reference relay (this
 * process) ⇄ the REAL Letta Code listener (a process) ⇄ the scripted model. Two forced
 * re-deliveries of one call, each with a ledger (one row per execution, with the key it saw):
 *
 * - **to another process's session**: the session running the call vanishes (its socket is cut and
 *   it cannot come back); the relay hands the unanswered request, the same request id, to another
 *   session of the same agent and conversation, which runs it again. Both executions saw the SAME
 *   key — what a downstream service (payments, tickets) deduplicates on. The key is computed from
 *   the call, not kept in memory, so a new table derives it again.
 * - **to the same session after a reconnect**: the relay re-offers the request while the call still
 *   runs; the session knows that request id is waiting for this call's answer (a `tool-call-duplicate`
 *   event, `duplicate`), the tool runs once, with one key, and the one answer ends the turn.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSession, defineTool, type Session, type ToolCallDuplicateEvent } from "../packages/toolrelay/src/index.js";
import { idempotencyKeyOf } from "../packages/toolrelay/src/calls/index.js";
import type { ModelScript } from "../test/support/scripted-model-server.js";
import { until } from "../test/support/wait.js";
import { startCloudFaultStack, type CloudFaultStack } from "./support/cloud-fault-stack.js";

/** The first model request of a turn books `call_0`; a tool result ends the turn. */
const script: ModelScript = (request) => {
  if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}` };
  const seat = /seat (\w+)/.exec(request.lastUserText)?.[1];
  if (seat) return { toolCalls: [{ id: "call_0", name: "book_seat", arguments: { seat } }] };
  return { text: "pong" };
};

interface LedgerRow {
  who: string;
  seat: string;
  toolCallId: string;
  key: string;
}

/** A ledger tool: each execution appends a row, then waits for `gate` (if given) before answering. */
function bookTool(who: string, ledger: LedgerRow[], gate?: Promise<void>) {
  return defineTool({
    name: "book_seat",
    description: "Book a seat",
    inputSchema: z.object({ seat: z.string() }),
    execute: async ({ seat }, context) => {
      ledger.push({ who, seat, toolCallId: context.toolCallId, key: context.idempotencyKey });
      await gate;
      return `booked ${seat}`;
    },
  });
}

describe("cloud: the idempotency key across a forced re-delivery (real listener)", () => {
  let stack: CloudFaultStack;
  const sessions: Session[] = [];
  beforeAll(async () => {
    stack = await startCloudFaultStack({
      envName: "toolrelay-idempotency-key",
      apiKey: "idempotency-key-key",
      script,
      // A session that left is forgotten after 300 ms: its unanswered calls go to another session.
      relay: { heartbeatIntervalMs: 0, sdkResumeWindowMs: 300 },
    });
  }, 60_000);
  afterAll(async () => {
    for (const session of sessions.splice(0)) await session.close().catch(() => undefined);
    await stack?.stop();
  });

  it("another session that gets the same request runs it with the SAME key (the ledger has two executions, one key)", async () => {
    const ledger: LedgerRow[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The first session goes through the proxy (which the test closes); the second straight to the relay.
    const first = await createSession(
      stack.sessionOptions(
        { pingIntervalMs: 1_000, pongTimeoutMs: 2_000, backoff: { initialDelayMs: 200, maxDelayMs: 500 } },
        { tools: [bookTool("first", ledger, gate)], requestTimeoutMs: 10_000 },
      ),
    );
    sessions.push(first);
    first.on("error", () => undefined);
    const firstStarts: string[] = [];
    first.on("tool-call-start", (event) => firstStarts.push(event.requestId));
    const turn = first.send("book seat 12A");
    turn.result.catch(() => undefined); // the first session never sees this turn end
    await until(() => ledger.length === 1, "the first session ran the call", 20_000);

    const second = await createSession(
      stack.sessionOptions(
        { baseUrl: stack.relay.httpUrl },
        {
          tools: [bookTool("second", ledger)],
          agent: { id: first.agentId },
          conversation: first.conversationId,
          requestTimeoutMs: 10_000,
        },
      ),
    );
    sessions.push(second);
    const starts: string[] = [];
    second.on("tool-call-start", (event) => starts.push(event.requestId));
    await stack.proxy.close(); // the first session's socket is gone, and it cannot come back

    await until(
      () => ledger.length === 2,
      () => `the second session ran the re-delivered call (ledger: ${JSON.stringify(ledger)})`,
      20_000,
    );
    release();
    const answered = await stack.model.waitForRequest((request) => request.lastMessage?.role === "tool", { timeoutMs: 20_000 });

    expect(ledger.map((row) => [row.who, row.seat, row.toolCallId])).toEqual([
      ["first", "12A", "call_0"],
      ["second", "12A", "call_0"],
    ]);
    expect(ledger[0]!.key).toMatch(/^tr1_[A-Za-z0-9_-]{43}$/);
    expect(ledger[1]!.key).toBe(ledger[0]!.key);
    // The same request (the relay's request id is the runtime's), so the same key, derived again by another table.
    expect(starts).toEqual(firstStarts);
    expect(ledger[0]!.key).toBe(idempotencyKeyOf(first.agentId, first.conversationId, "call_0", firstStarts[0]!));
    expect(answered.toolResults.map((result) => result.text)).toEqual(["booked 12A"]);
    for (const session of sessions.splice(0)) await session.close().catch(() => undefined);
  }, 90_000);

  it("the same session after a reconnect: the relay's re-offer of the running call is a duplicate (nothing run again): it runs once, with one key", async () => {
    const ledger: LedgerRow[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const session = await createSession(
      stack.sessionOptions(
        { baseUrl: stack.relay.httpUrl, pingIntervalMs: 1_000, pongTimeoutMs: 2_000, backoff: { initialDelayMs: 100, maxDelayMs: 300 } },
        { tools: [bookTool("only", ledger, gate)], requestTimeoutMs: 10_000 },
      ),
    );
    sessions.push(session);
    const duplicates: ToolCallDuplicateEvent[] = [];
    const states: string[] = [];
    session.on("tool-call-duplicate", (event) => duplicates.push(event));
    session.on("connection-state-change", (event) => states.push(event.state));
    session.on("error", () => undefined);
    const requestIds: string[] = [];
    session.on("tool-call-start", (event) => requestIds.push(event.requestId));

    const turn = session.send("book seat 7C");
    await until(() => ledger.length === 1, "the call ran", 20_000);
    expect(stack.relay.dropSdkSockets(undefined, { code: 1012, reason: "forced drop" })).toBeGreaterThan(0);
    await until(
      () => duplicates.length > 0,
      () => `the relay re-offered the request (states: ${states.join(" → ")})`,
      20_000,
    );
    release();
    const result = await turn.result;

    expect(result.text).toBe("done: booked 7C");
    expect(ledger).toHaveLength(1);
    expect(ledger[0]!.key).toMatch(/^tr1_/);
    expect(duplicates.map((event) => [event.requestId, event.toolCallId, event.disposition])).toEqual([
      [requestIds[0], "call_0", "duplicate"],
    ]);
  }, 90_000);
});
