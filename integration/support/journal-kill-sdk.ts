/**
 * The SDK process of the call journal's kill test (integration/call-journal-kill.test.ts), run as its
 * own Node process so the test can `kill -9` it. Configured by the JSON in `JOURNAL_KILL_CONFIG`.
 *
 * - **Life 1** opens `count` cloud sessions (one conversation each, on one agent), writes their ids
 *   to `conversationsPath`, and sends each `pay seat <i>`. The `pay` tool appends a ledger row (one
 *   per execution, with its pid and idempotency key), then waits: an even seat finishes once the
 *   file `finishPath` exists, an odd seat never does.
 * - **Life 2** opens a session on each of those conversations (the same journal) and waits: the
 *   relay re-offers every unanswered call to it.
 *
 * Prints one JSON object per line on stdout: `{ready}`, `{end: toolCallId, outcome}` per settled call,
 * `{durable: key}` when a call's settlement is in the journal, `{fatal}`.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import type { CallJournal } from "../../packages/toolrelay/src/calls/index.js";
import { createSession, defineTool, type Session, type SessionOptions } from "../../packages/toolrelay/src/index.js";

export interface JournalKillConfig {
  life: 1 | 2;
  /** The relay (or the proxy in front of it) the sessions use. */
  baseUrl: string;
  apiKey: string;
  envName: string;
  modelHandle: string;
  journal: { kind: "file"; path: string } | { kind: "nats"; servers: string[]; bucket: string } | { kind: "none" };
  ledgerPath: string;
  conversationsPath: string;
  finishPath: string;
  count: number;
}

interface Conversation {
  seat: number;
  agentId: string;
  conversationId: string;
}

const config = JSON.parse(process.env.JOURNAL_KILL_CONFIG ?? "{}") as JournalKillConfig;
const print = (value: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(value)}\n`);

async function openJournal(): Promise<CallJournal | undefined> {
  const spec = config.journal;
  if (spec.kind === "none") return undefined;
  // Loaded only when used: the control runs without either.
  const journal: CallJournal =
    spec.kind === "file"
      ? await (await import("../../packages/toolrelay/src/journal/index.js")).openFileCallJournal({ path: spec.path })
      : await (await import("../../packages/toolrelay/src/nats-journal/index.js")).openNatsCallJournal({
          servers: spec.servers,
          bucket: spec.bucket,
        });
  // Tell the test when a settlement is durable (it kills the process only after).
  const settle = journal.settle.bind(journal);
  journal.settle = async (key, response, settledAt) => {
    await settle(key, response, settledAt);
    print({ durable: key });
  };
  return journal;
}

function payTool() {
  return defineTool({
    name: "pay",
    description: "Pays for a seat. Not idempotent: every run pays again.",
    inputSchema: z.object({ seat: z.number().int() }),
    timeoutMs: 280_000,
    execute: async ({ seat }, context) => {
      appendFileSync(config.ledgerPath, `${JSON.stringify({ life: config.life, pid: process.pid, seat, key: context.idempotencyKey })}\n`);
      if (config.life === 2) return `paid seat ${seat} (again, life 2)`;
      while (!(seat % 2 === 0 && existsSync(config.finishPath))) await sleep(20);
      return `paid seat ${seat}`;
    },
  });
}

function sessionOptions(journal: CallJournal | undefined, agent: SessionOptions["agent"], conversation: string): SessionOptions {
  return {
    backend: {
      kind: "cloud",
      apiKey: config.apiKey,
      baseUrl: config.baseUrl,
      environment: { name: config.envName },
      pingIntervalMs: 1_000,
      pongTimeoutMs: 2_000,
      backoff: { initialDelayMs: 200, maxDelayMs: 1_000 },
    },
    agent,
    conversation,
    tools: [payTool()],
    journal,
    requestTimeoutMs: 30_000,
    // Every call's end: a re-offered call can settle while createSession still runs, so the
    // listener is given as an option (attached before the session connects).
    on: {
      "tool-call-end": (event) => print({ end: event.toolCallId, outcome: event.outcome }),
      error: () => undefined,
    },
  };
}

async function lifeOne(journal: CallJournal | undefined): Promise<void> {
  const first = await createSession(sessionOptions(journal, { create: { model: config.modelHandle, name: config.envName } }, "new"));
  const sessions: Array<{ seat: number; session: Session }> = [{ seat: 0, session: first }];
  for (let seat = 1; seat < config.count; seat += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, config.count - seat) }, (_, index) =>
        createSession(sessionOptions(journal, { id: first.agentId }, "new")).then((session) => ({ seat: seat + index, session })),
      ),
    );
    sessions.push(...batch);
  }
  const conversations: Conversation[] = sessions.map(({ seat, session }) => ({
    seat,
    agentId: session.agentId,
    conversationId: session.conversationId,
  }));
  writeFileSync(config.conversationsPath, JSON.stringify(conversations));
  for (const { seat, session } of sessions) {
    session.send(`pay seat ${seat}`).result.catch(() => undefined);
  }
  print({ ready: sessions.length });
}

async function lifeTwo(journal: CallJournal | undefined): Promise<void> {
  const conversations = JSON.parse(readFileSync(config.conversationsPath, "utf8")) as Conversation[];
  for (let index = 0; index < conversations.length; index += 10) {
    await Promise.all(
      conversations.slice(index, index + 10).map(async ({ agentId, conversationId }) => {
        await createSession(sessionOptions(journal, { id: agentId }, conversationId));
      }),
    );
  }
  print({ ready: conversations.length });
}

process.on("unhandledRejection", (error) => print({ fatal: `unhandled rejection: ${String(error)}` }));
try {
  const journal = await openJournal();
  await (config.life === 1 ? lifeOne(journal) : lifeTwo(journal));
} catch (error) {
  print({ fatal: String((error as Error)?.stack ?? error) });
  process.exit(1);
}
