/**
 * The NATS JetStream KV call journal (`toolrelay/nats-journal`) against REAL nats-server processes:
 * the round trip, two connections racing `start` on one key, a settle that outlives `kill -9` of
 * the server, an R3 record that outlives its stream leader, garbage in the bucket, a dead URL,
 * options KV cannot honour, and a second process (tsx) reading what this one wrote.
 */
import { createHash } from "node:crypto";
import { type KV, Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { JournalEntry } from "../packages/toolrelay/src/calls/index.js";
import { ToolrelayError } from "../packages/toolrelay/src/errors.js";
import { type NatsCallJournal, openNatsCallJournal } from "../packages/toolrelay/src/nats-journal/index.js";
import type { ToolCallResponseBody } from "../packages/toolrelay/src/wire/index.js";
import { type NatsServers, startNatsServers } from "./support/nats-servers.js";
import { startTsxProcess } from "./support/tsx-process.js";

const CHILD = new URL("./support/nats-journal-child.ts", import.meta.url).pathname;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function started(count: 1 | 3): Promise<NatsServers> {
  const nats = await startNatsServers({ count });
  cleanups.push(() => nats.stop());
  return nats;
}

async function opened(options: Parameters<typeof openNatsCallJournal>[0]): Promise<NatsCallJournal> {
  const journal = await openNatsCallJournal(options);
  cleanups.push(() => journal.close());
  return journal;
}

async function rawBucket(servers: string[], bucket: string): Promise<{ kv: KV; connection: NatsConnection }> {
  const connection = await connect({ servers, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  cleanups.push(() => connection.close());
  return { kv: await new Kvm(connection).open(bucket), connection };
}

let serial = 0;
function entry(overrides: Partial<JournalEntry> = {}): JournalEntry {
  serial++;
  return {
    key: `tr1_test_${process.pid}_${serial}`,
    state: "started",
    toolName: "pay",
    agentId: "agent-1",
    conversationId: "conv-1",
    toolCallId: `call_${serial}`,
    inputSha256: "digest",
    startedAt: 1_700_000_000_000 + serial,
    ...overrides,
  };
}

const response = (text: string): ToolCallResponseBody => ({ result: { content: [{ type: "text", text }] } });

/** The KV key the journal keeps `key`'s record under. */
const recordKvKey = (key: string) => `c.${createHash("sha256").update(key).digest("hex")}`;

describe("NATS KV call journal", () => {
  it("start → find → settle → find, with an alias, and start+settle given at once stay in order", async () => {
    const nats = await started(1);
    const journal = await opened({ servers: nats.urls, bucket: "roundtrip" });
    expect(journal.kind).toBe("nats-kv");
    const call = entry();
    expect(await journal.find(call.key)).toBeUndefined();
    expect(await journal.start(call, { amount: 5 })).toBeUndefined();
    expect(await journal.find(call.key)).toEqual(call);
    // A second start of the same call writes nothing and answers the record.
    expect(await journal.start({ ...call, startedAt: call.startedAt + 1 }, {})).toEqual(call);
    await journal.settle(call.key, response("paid"), call.startedAt + 50);
    const settled = { ...call, state: "settled", settledAt: call.startedAt + 50, response: response("paid") };
    expect(await journal.find(call.key)).toEqual(settled);
    await journal.alias(`${call.key}_retry`, call.key);
    expect(await journal.find(`${call.key}_retry`)).toEqual(settled);
    // A second settle (another process's idempotent re-run) leaves the first settlement.
    await journal.settle(call.key, response("paid twice"), call.startedAt + 90);
    expect((await journal.find(call.key))?.response).toEqual(response("paid"));

    // Not awaited in between: 50 calls each started then settled at once, then read at once.
    const calls = Array.from({ length: 50 }, () => entry());
    const writes = calls.flatMap((each) => [
      journal.start(each, {}),
      journal.settle(each.key, response(each.toolCallId), each.startedAt + 1),
    ]);
    const reads = calls.map((each) => journal.find(each.key));
    await Promise.all(writes);
    for (const [index, found] of (await Promise.all(reads)).entries()) {
      expect(found).toMatchObject({ state: "settled", response: response(calls[index]!.toolCallId) });
    }
  });

  it("stores the input only with retention.storeInputs", async () => {
    const nats = await started(1);
    const plain = await opened({ servers: nats.urls, bucket: "inputs" });
    const storing = await opened({ servers: nats.urls, bucket: "inputs", retention: { storeInputs: true } });
    const [first, second] = [entry(), entry()];
    await plain.start(first, { secret: 1 });
    await storing.start(second, { secret: 2 });
    expect(await plain.find(first.key)).not.toHaveProperty("input");
    expect((await plain.find(second.key))?.input).toEqual({ secret: 2 });
  });

  it("two connections race start on the same keys: exactly one start per key gets undefined", async () => {
    const nats = await started(1);
    const [one, two] = [await opened({ servers: nats.urls, bucket: "race" }), await opened({ servers: nats.urls, bucket: "race" })];
    const calls = Array.from({ length: 100 }, () => entry());
    const results = await Promise.all(
      calls.map((call) => Promise.all([one.start(call, {}), two.start({ ...call, startedAt: call.startedAt + 7 }, {})])),
    );
    for (const [index, [first, second]] of results.entries()) {
      expect([first, second].filter((result) => result === undefined)).toHaveLength(1);
      // The loser got the winner's record.
      const winner = first === undefined ? calls[index]!.startedAt : calls[index]!.startedAt + 7;
      expect((first ?? second)?.startedAt).toBe(winner);
    }
    // The loser of one key settles it anyway (an idempotent re-run): through get + update.
    const call = calls[0]!;
    const loser = results[0]![0] === undefined ? two : one;
    await loser.settle(call.key, response("by the loser"), call.startedAt + 3);
    expect((await one.find(call.key))?.response).toEqual(response("by the loser"));
  });

  it("a settle outlives kill -9 of the server (file store), and a settle given while it is down lands once it is back", async () => {
    const nats = await started(1);
    const [server] = nats.servers;
    const journal = await opened({ servers: nats.urls, bucket: "durable", retryWindowMs: 30_000 });
    const [done, pending] = [entry(), entry()];
    await journal.start(done, {});
    await journal.settle(done.key, response("settled before the kill"), done.startedAt + 1);
    await journal.start(pending, {});
    await server!.kill("SIGKILL");
    const late = journal.settle(pending.key, response("settled while down"), pending.startedAt + 1);
    await server!.restart();
    await late;
    const fresh = await opened({ servers: nats.urls, bucket: "durable" });
    expect(await fresh.find(done.key)).toMatchObject({ state: "settled", response: response("settled before the kill") });
    expect(await fresh.find(pending.key)).toMatchObject({ state: "settled", response: response("settled while down") });
  });

  it("a start whose answer was lost (server frozen past the request timeout) knows its own record on the retry", async () => {
    const nats = await started(1);
    const [server] = nats.servers;
    const journal = await opened({ servers: nats.urls, bucket: "frozen", requestTimeoutMs: 300, retryWindowMs: 30_000 });
    const [call, other] = [entry(), entry()];
    process.kill(server!.pid, "SIGSTOP");
    let resumed = false;
    try {
      // Sent while frozen: every try times out; all of them are applied (or refused) once it resumes.
      const starting = journal.start(call, {});
      const settling = journal.settle(call.key, response("frozen"), call.startedAt + 1);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      process.kill(server!.pid, "SIGCONT");
      resumed = true;
      expect(await starting).toBeUndefined();
      await settling;
    } finally {
      if (!resumed) process.kill(server!.pid, "SIGCONT");
    }
    expect(await journal.find(call.key)).toMatchObject({ state: "settled", response: response("frozen") });
    // Someone else's record is still someone else's.
    expect(await journal.start(other, {})).toBeUndefined();
    const second = await opened({ servers: nats.urls, bucket: "frozen" });
    expect(await second.start(other, {})).toEqual(other);
  });

  it("R3: a record whose start resolved outlives killing its stream leader, and settles on the new one", async () => {
    const nats = await started(3);
    const journal = await opened({ servers: nats.urls, bucket: "replicated", replicas: 3, retryWindowMs: 30_000 });
    const call = entry();
    expect(await journal.start(call, {})).toBeUndefined();
    const leader = await nats.streamLeader("KV_replicated");
    await leader.kill("SIGKILL");
    expect(await journal.find(call.key)).toEqual(call);
    await journal.settle(call.key, response("after the election"), call.startedAt + 1);
    const newLeader = await nats.streamLeader("KV_replicated");
    expect(newLeader.name).not.toBe(leader.name);
    await leader.restart();
    const other = await opened({ servers: [leader.url], bucket: "replicated", replicas: 3 });
    expect(await other.find(call.key)).toMatchObject({ state: "settled", response: response("after the election") });
  });

  it("garbage in the bucket reads as expired (outcome unknown), never throws, and is never overwritten", async () => {
    const nats = await started(1);
    const journal = await opened({ servers: nats.urls, bucket: "garbage" });
    const { kv } = await rawBucket(nats.urls, "garbage");
    const valid = entry();
    const bad: Array<[string, string | Uint8Array]> = [
      ["not JSON", "{nope"],
      ["not UTF-8", new Uint8Array([0xff, 0xfe, 0x00])],
      ["another shape", JSON.stringify({ hello: "world" })],
      ["a record of another key", JSON.stringify({ v: 1, kind: "call", claim: "x", ...valid, key: "tr1_other" })],
      ["a settled record without a response", JSON.stringify({ v: 1, kind: "call", claim: "x", ...valid, state: "settled", settledAt: 1 })],
      [
        "a bad response",
        JSON.stringify({ v: 1, kind: "call", claim: "x", ...valid, state: "settled", settledAt: 1, response: { nope: 1 } }),
      ],
      ["an alias under a record key", JSON.stringify({ v: 1, kind: "alias", key: valid.key, target: "tr1_x" })],
      ["deep nesting", `${"[".repeat(10_000)}${"]".repeat(10_000)}`],
    ];
    for (const [what, value] of bad) {
      const call = entry();
      await kv.put(recordKvKey(call.key), typeof value === "string" ? value.replaceAll(valid.key, call.key) : value);
      const expired = { key: call.key, state: "expired" };
      expect(await journal.find(call.key), what).toMatchObject(expired);
      expect(await journal.start(call, {}), what).toMatchObject(expired);
      await expect(journal.settle(call.key, response("x"), 1), what).rejects.toMatchObject({ code: "JOURNAL_FAILED" });
      expect(await journal.find(call.key), what).toMatchObject(expired);
    }
    // An alias that is garbage, and one whose call is gone.
    await kv.put(`a.${createHash("sha256").update("tr1_alias_bad").digest("hex")}`, "garbage");
    expect(await journal.find("tr1_alias_bad")).toMatchObject({ key: "tr1_alias_bad", state: "expired" });
    await journal.alias("tr1_alias_gone", "tr1_never_written");
    expect(await journal.find("tr1_alias_gone")).toMatchObject({ key: "tr1_never_written", state: "expired" });
    // A deleted record is absent.
    const deleted = entry();
    await journal.start(deleted, {});
    await kv.delete(recordKvKey(deleted.key));
    expect(await journal.find(deleted.key)).toBeUndefined();
    expect(await journal.start(deleted, {})).toBeUndefined();
  });

  it("a dead URL fails open with CONNECT_FAILED within the connect timeout, naming the URL without credentials", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const began = Date.now();
    const error = await openNatsCallJournal({ servers: `nats://user:hunter2@127.0.0.1:${port}`, connectTimeoutMs: 2_000 }).catch(
      (caught: unknown) => caught,
    );
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(error).toBeInstanceOf(ToolrelayError);
    expect(error).toMatchObject({ code: "CONNECT_FAILED" });
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    expect((error as Error).message).not.toContain("hunter2");
  });

  it("rejects options KV cannot honour, and an existing bucket with other settings", async () => {
    const nats = await started(1);
    for (const retention of [
      { tombstoneRetentionMs: 1 },
      { maxEntries: 10 },
      { maxResponseChars: 10 },
      { maxTombstones: 1 },
      { retentionMs: 5 },
    ]) {
      await expect(openNatsCallJournal({ servers: nats.urls, retention })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    }
    for (const bad of [
      {},
      { servers: [] },
      { servers: nats.urls, bucket: "a.b" },
      { servers: nats.urls, replicas: 2.5 },
      { servers: nats.urls, colour: 1 },
    ]) {
      await expect(openNatsCallJournal(bad as never)).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    }
    await opened({ servers: nats.urls, bucket: "settings", retention: { retentionMs: 3_600_000 } });
    const error = await openNatsCallJournal({ servers: nats.urls, bucket: "settings" }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "INVALID_OPTIONS", details: { found: { retentionMs: 3_600_000 } } });
    expect((error as Error).message).toContain("max_age 3600000 ms");
  });

  it("close() waits for pending writes, is idempotent, rejects later calls, and leaves a given connection open", async () => {
    const nats = await started(1);
    const connection = await connect({ servers: nats.urls });
    cleanups.push(() => connection.close());
    const journal = await openNatsCallJournal({ connection, bucket: "closing" });
    const call = entry();
    const writes = [journal.start(call, {}), journal.settle(call.key, response("before close"), 1)];
    const closing = journal.close();
    await Promise.all(writes);
    await Promise.all([closing, journal.close()]);
    await expect(journal.start(entry(), {})).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    await expect(journal.find(call.key)).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    expect(connection.isClosed()).toBe(false);
    const again = await opened({ connection, bucket: "closing" });
    expect(await again.find(call.key)).toMatchObject({ state: "settled", response: response("before close") });

    // Its own connection: close() right after 20 start+settle pairs writes them all, then drains.
    const owning = await openNatsCallJournal({ servers: nats.urls, bucket: "closing" });
    const calls = Array.from({ length: 20 }, () => entry());
    const pending = calls.flatMap((each) => [owning.start(each, {}), owning.settle(each.key, response(each.key), 1)]);
    await owning.close();
    await Promise.all(pending);
    for (const each of calls) expect(await again.find(each.key)).toMatchObject({ state: "settled", response: response(each.key) });
  });

  it("a second process (tsx) finds what this one wrote, and this one finds what it wrote", async () => {
    const nats = await started(1);
    const journal = await opened({ servers: nats.urls, bucket: "processes" });
    const call = entry();
    await journal.start(call, {});
    await journal.settle(call.key, response("from the parent"), call.startedAt + 1);
    const childKey = `tr1_child_${process.pid}`;
    const child = startTsxProcess(CHILD, [], {
      JOURNAL_SERVERS: nats.urls.join(","),
      JOURNAL_BUCKET: "processes",
      JOURNAL_FIND: `${call.key},tr1_absent`,
      JOURNAL_START: childKey,
    });
    cleanups.push(() => child.stop());
    await child.waitForLine(/^(done|fatal .*)$/, 30_000);
    expect(child.output()).not.toContain("fatal");
    const found = child.lines.find((line) => line.startsWith(`found ${call.key} `))!;
    expect(JSON.parse(found.slice(`found ${call.key} `.length))).toMatchObject({ state: "settled", response: response("from the parent") });
    expect(child.lines).toContain("found tr1_absent none");
    expect(await journal.find(childKey)).toMatchObject({
      state: "settled",
      toolName: "child_tool",
      response: response(`child pid ${child.pid}`),
    });
  });
});
