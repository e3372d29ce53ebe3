/**
 * A second process for integration/nats-call-journal.test.ts: opens the NATS KV call journal on the
 * bucket the test names, answers what it holds for each key, and writes one record of its own.
 *
 * Environment: `JOURNAL_SERVERS` (comma-separated URLs), `JOURNAL_BUCKET`, `JOURNAL_FIND` (keys,
 * comma-separated), `JOURNAL_START` (a key to start and settle). Prints `found <key> <entry JSON
 * or "none">` per key, `wrote <key>`, then `done`; `fatal <message>` (exit 1) on any error.
 */
import { openNatsCallJournal } from "../../packages/toolrelay/src/nats-journal/index.js";

const servers = (process.env.JOURNAL_SERVERS ?? "").split(",");
const bucket = process.env.JOURNAL_BUCKET ?? "toolrelay_calls";
const keys = (process.env.JOURNAL_FIND ?? "").split(",").filter((key) => key !== "");
const ownKey = process.env.JOURNAL_START ?? "";

async function main(): Promise<void> {
  const journal = await openNatsCallJournal({ servers, bucket });
  try {
    for (const key of keys) {
      const entry = await journal.find(key);
      process.stdout.write(`found ${key} ${entry === undefined ? "none" : JSON.stringify(entry)}\n`);
    }
    if (ownKey !== "") {
      const entry = {
        key: ownKey,
        state: "started" as const,
        toolName: "child_tool",
        agentId: "agent-child",
        conversationId: "conv-child",
        toolCallId: "call-child",
        inputSha256: "child-digest",
        startedAt: Date.now(),
      };
      // Not awaited in between: the journal keeps one key's writes in call order.
      const started = journal.start(entry, { from: "child" });
      const settled = journal.settle(ownKey, { result: { content: [{ type: "text", text: `child pid ${process.pid}` }] } }, Date.now());
      if ((await started) !== undefined) throw new Error(`${ownKey} was already in the journal`);
      await settled;
      process.stdout.write(`wrote ${ownKey}\n`);
    }
  } finally {
    await journal.close();
  }
  process.stdout.write("done\n");
}

main().catch((error: unknown) => {
  process.stdout.write(`fatal ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
