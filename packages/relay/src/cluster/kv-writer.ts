/**
 * The key-value writes on a tool call's path (docs/relay-cluster.md "Cost per call"): each is a
 * JetStream publish to the bucket's subject `$KV.<bucket>.<key>`, acknowledged by the stream, as
 * the official `@nats-io/kv` client writes it — but the acknowledgements come back on one inbox
 * subscription of this writer, matched by a counter, with one timer for every write's deadline.
 * The official client's request path arms a timer and builds an Error (with its stack) per write,
 * a large share of a node's CPU per call (bench relay-cluster, "CPU per call"). Reads, watches and
 * the rare writes stay with the official client.
 */
import { createInbox, headers, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { unrefTimer, type TimerHandle, type Timers } from "toolrelay/protocol";

/** How long a write may wait for the stream's acknowledgement (the official client's JetStream default). */
export const KV_WRITE_TIMEOUT_MS = 5_000;

/** JetStream's error code for "wrong last sequence": a create found the key there already. */
const WRONG_LAST_SEQUENCE = 10071;

/** A write the stream refused, did not acknowledge in time, or that could not be sent. */
export class KvWriteError extends Error {
  /** JetStream's `err_code`, when the stream answered with an error. */
  readonly jetStreamCode: number | undefined;

  constructor(message: string, jetStreamCode?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "KvWriteError";
    this.jetStreamCode = jetStreamCode;
  }
}

interface PendingWrite {
  resolve(outcome: "written" | "exists"): void;
  reject(error: KvWriteError): void;
  deadline: number;
}

/** The stream's answer to one publish: `{ stream, seq }`, or `{ error: { code, err_code, description } }`. */
function readAcknowledgement(message: Msg): { ok: true } | { ok: false; code: number | undefined; text: string } {
  if (message.data.length === 0) {
    const status = message.headers?.code;
    return { ok: false, code: undefined, text: status === 503 ? "no JetStream stream answers for the bucket" : `status ${status ?? "?"}` };
  }
  let body: unknown;
  try {
    body = message.json();
  } catch {
    return { ok: false, code: undefined, text: "an acknowledgement that is not JSON" };
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return { ok: false, code: undefined, text: "an acknowledgement that is not a JSON object" };
  const { error, seq } = body as { error?: unknown; seq?: unknown };
  if (error === undefined) {
    return typeof seq === "number" ? { ok: true } : { ok: false, code: undefined, text: "an acknowledgement without a stream sequence" };
  }
  const fields = typeof error === "object" && error !== null ? (error as { err_code?: unknown; description?: unknown }) : {};
  return {
    ok: false,
    code: typeof fields.err_code === "number" ? fields.err_code : undefined,
    text: typeof fields.description === "string" ? fields.description : "JetStream refused the write",
  };
}

export class KvWriter {
  #connection: NatsConnection;
  #subjectPrefix: string;
  #timers: Timers;
  #timeoutMs: number;
  #inbox: string;
  #subscription: Subscription;
  #pending = new Map<string, PendingWrite>();
  #counter = 0;
  #sweep: TimerHandle | undefined;
  #closed = false;
  /** Shared header sets: a publish encodes them and never changes them. */
  #createHeaders: MsgHdrs;
  #deleteHeaders: MsgHdrs;

  constructor(connection: NatsConnection, bucket: string, options: { timers: Timers; timeoutMs?: number | undefined }) {
    this.#connection = connection;
    this.#subjectPrefix = `$KV.${bucket}.`;
    this.#timers = options.timers;
    this.#timeoutMs = options.timeoutMs ?? KV_WRITE_TIMEOUT_MS;
    this.#inbox = createInbox();
    this.#createHeaders = headers();
    this.#createHeaders.set("Nats-Expected-Last-Subject-Sequence", "0");
    this.#deleteHeaders = headers();
    this.#deleteHeaders.set("KV-Operation", "DEL");
    this.#subscription = connection.subscribe(`${this.#inbox}.*`, {
      callback: (error, message) => {
        if (!error) this.#acknowledged(message);
      },
    });
  }

  /** Writes `value` under `key` unless the key holds a value: `"written"`, or `"exists"` (nothing written). */
  create(key: string, value: Uint8Array): Promise<"written" | "exists"> {
    return this.#write(key, value, this.#createHeaders);
  }

  /** Writes `value` under `key`, over whatever it held. */
  async put(key: string, value: Uint8Array): Promise<void> {
    await this.#write(key, value, undefined);
  }

  /** Deletes `key` (a delete marker, as the official client writes it). */
  async delete(key: string): Promise<void> {
    await this.#write(key, new Uint8Array(0), this.#deleteHeaders);
  }

  /** Stops: every write still waiting is rejected; later writes are refused. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#subscription.unsubscribe();
    if (this.#sweep !== undefined) this.#timers.clearTimeout(this.#sweep);
    this.#sweep = undefined;
    const waiting = [...this.#pending.values()];
    this.#pending.clear();
    for (const write of waiting) write.reject(new KvWriteError("the key-value writer closed before the stream acknowledged the write"));
  }

  #write(key: string, value: Uint8Array, writeHeaders: MsgHdrs | undefined): Promise<"written" | "exists"> {
    if (this.#closed) return Promise.reject(new KvWriteError("the key-value writer is closed"));
    const token = String(++this.#counter);
    return new Promise((resolve, reject) => {
      this.#pending.set(token, { resolve, reject, deadline: this.#timers.now() + this.#timeoutMs });
      try {
        this.#connection.publish(this.#subjectPrefix + key, value, {
          reply: `${this.#inbox}.${token}`,
          ...(writeHeaders ? { headers: writeHeaders } : {}),
        });
      } catch (error) {
        this.#pending.delete(token);
        reject(new KvWriteError(`the write could not be sent: ${String(error)}`, undefined, { cause: error }));
        return;
      }
      this.#armSweep();
    });
  }

  #acknowledged(message: Msg): void {
    const token = message.subject.slice(message.subject.lastIndexOf(".") + 1);
    const write = this.#pending.get(token);
    if (!write) return;
    this.#pending.delete(token);
    const answer = readAcknowledgement(message);
    if (answer.ok) write.resolve("written");
    else if (answer.code === WRONG_LAST_SEQUENCE) write.resolve("exists");
    else write.reject(new KvWriteError(answer.text, answer.code));
  }

  /**
   * One timer for every waiting write, set for the oldest one's deadline (writes wait in the order
   * they were sent, so the oldest is the first): it rejects the overdue ones and waits for the next.
   */
  #armSweep(): void {
    if (this.#sweep !== undefined) return;
    const oldest = this.#pending.values().next().value;
    if (oldest === undefined) return;
    this.#sweep = this.#timers.setTimeout(
      () => {
        this.#sweep = undefined;
        const now = this.#timers.now();
        for (const [token, write] of this.#pending) {
          if (write.deadline > now) break;
          this.#pending.delete(token);
          write.reject(new KvWriteError(`the stream did not acknowledge the write within ${this.#timeoutMs} ms`));
        }
        this.#armSweep();
      },
      Math.max(1, oldest.deadline - this.#timers.now()),
    );
    unrefTimer(this.#sweep);
  }
}
