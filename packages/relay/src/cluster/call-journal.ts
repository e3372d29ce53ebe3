/**
 * Outstanding tool calls, shared (docs/relay-cluster.md "Tool calls"): the node holding an
 * environment writes each `external_tool_call_request` to the `<name>_calls` bucket — one key per
 * (environment, request id), made with create-if-absent — before it hands the call to an SDK
 * session; once the answer went to the listener the record holds the answer instead, until it
 * leaves the window of recent answers (recent-answers.ts). A node that takes the environment over
 * offers the unanswered calls again and writes the answers again; the SDK runs a call once per key
 * (it replays a call it ran), and the listener ignores an answer it no longer waits for.
 * The bucket's TTL is the relay's outstanding-call TTL, far beyond the runtime's 300 s wait —
 * unlike JetStream's 120 s publish-dedupe window, which is why this is a key and not a message id.
 */
import type { KV } from "@nats-io/kv";
import { decodeJson, encodeJson, keyToken } from "./cluster-store.js";
import type { KvWriter } from "./kv-writer.js";

/** One outstanding call as the bucket keeps it. */
export interface JournaledCall {
  requestId: string;
  runtimeKey: string;
  /** The request exactly as the listener sent it (UTF-8 JSON text); empty once answered. */
  frame: string;
  createdAt: number;
  /** The answer that went to the listener (UTF-8 JSON text), once answered: written again after a move. */
  answer?: string | undefined;
  answeredAt?: number | undefined;
}

const callKey = (connectionId: string, requestId: string) => `${connectionId}.${keyToken(requestId)}`;

function parseCall(value: unknown): JournaledCall | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.requestId !== "string" || typeof record.runtimeKey !== "string" || typeof record.frame !== "string") return undefined;
  const answer = typeof record.answer === "string" ? record.answer : undefined;
  return {
    requestId: record.requestId,
    runtimeKey: record.runtimeKey,
    frame: record.frame,
    createdAt: Number(record.createdAt) || 0,
    answer,
    answeredAt: answer === undefined ? undefined : Number(record.answeredAt) || 0,
  };
}

export class CallJournal {
  #kv: KV;
  #writes: KvWriter;

  /** `kv` reads the bucket; `writes` makes the writes on a call's path (kv-writer.ts). */
  constructor(kv: KV, writes: KvWriter) {
    this.#kv = kv;
    this.#writes = writes;
  }

  /**
   * Makes a call durable. `"created"`: it is the call's first record; `"existed"`: a record of
   * this request id was there already (it is replaced: the runtime's latest request counts).
   */
  async record(connectionId: string, call: JournaledCall): Promise<"created" | "existed"> {
    const key = callKey(connectionId, call.requestId);
    const value = encodeJson(call);
    if ((await this.#writes.create(key, value)) === "written") return "created";
    await this.#writes.put(key, value);
    return "existed";
  }

  /**
   * The call was answered to the listener: its record now holds the answer instead of the request
   * (a node taking over writes it to the listener again), until it leaves the window of recent answers.
   */
  async answered(connectionId: string, requestId: string, runtimeKey: string, answer: string, answeredAt: number): Promise<void> {
    await this.#writes.put(
      callKey(connectionId, requestId),
      encodeJson({ requestId, runtimeKey, frame: "", createdAt: answeredAt, answer, answeredAt }),
    );
  }

  /** The call was given up on, or its answer left the window of recent answers: forgotten. */
  async forget(connectionId: string, requestId: string): Promise<void> {
    await this.#writes.delete(callKey(connectionId, requestId));
  }

  /** Every outstanding call of an environment, oldest first. */
  async list(connectionId: string): Promise<JournaledCall[]> {
    const keys: string[] = [];
    for await (const key of await this.#kv.keys(`${connectionId}.>`)) keys.push(key);
    const entries = await Promise.all(keys.map((key) => this.#kv.get(key)));
    const calls = entries
      .map((entry) => (entry && entry.operation === "PUT" ? parseCall(decodeJson(entry.value)) : undefined))
      .filter((call): call is JournaledCall => call !== undefined);
    return calls.sort((a, b) => a.createdAt - b.createdAt);
  }

  /** Forgets every call of an environment (a fresh listener runtime cannot answer them; the environment is gone). */
  async forgetAll(connectionId: string): Promise<void> {
    const keys: string[] = [];
    for await (const key of await this.#kv.keys(`${connectionId}.>`)) keys.push(key);
    await Promise.all(keys.map((key) => this.#kv.delete(key)));
  }
}
